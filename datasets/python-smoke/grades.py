"""Letter grades from points."""


def letter(points: float, maximum: float = 100.0) -> str:
    """The letter grade of `points` out of `maximum`."""
    if maximum <= 0:
        raise ValueError("maximum must be positive")
    if points < 0 or points > maximum:
        raise ValueError("points out of range")
    share = points / maximum
    if share >= 0.9:
        return "A"
    if share >= 0.8:
        return "B"
    if share >= 0.7:
        return "C"
    if share >= 0.6:
        return "D"
    return "F"


def passed(points: list[float], maximum: float = 100.0) -> int:
    """How many of the results pass (grade D or better)."""
    return sum(1 for p in points if letter(p, maximum) != "F")
