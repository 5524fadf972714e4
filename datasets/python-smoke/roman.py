"""Roman numerals."""

_VALUES = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(n: int) -> str:
    """n (1–3999) as a Roman numeral."""
    if n < 1 or n > 3999:
        raise ValueError("out of range")
    out = []
    for value, symbol in _VALUES:
        while n >= value:
            out.append(symbol)
            n -= value
    return "".join(out)


def from_roman(s: str) -> int:
    """The value of a Roman numeral."""
    if not s:
        raise ValueError("empty numeral")
    digits = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    previous = 0
    for ch in reversed(s.upper()):
        if ch not in digits:
            raise ValueError(f"not a Roman digit: {ch}")
        value = digits[ch]
        if value < previous:
            total -= value
        else:
            total += value
            previous = value
    return total
