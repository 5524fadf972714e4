"""Classifies triangles by their side lengths (the classic test-generation example)."""


def classify(a: int, b: int, c: int) -> str:
    """Returns the kind of triangle with sides a, b and c."""
    if a <= 0 or b <= 0 or c <= 0:
        raise ValueError("sides must be positive")
    if a + b <= c or a + c <= b or b + c <= a:
        return "not a triangle"
    if a == b == c:
        return "equilateral"
    if a == b or b == c or a == c:
        return "isosceles"
    if a * a + b * b == c * c or a * a + c * c == b * b or b * b + c * c == a * a:
        return "right"
    return "scalene"
