"""Leap years and month lengths."""


def is_leap(year: int) -> bool:
    """Whether `year` is a leap year in the Gregorian calendar."""
    if year < 1583:
        raise ValueError("before the Gregorian calendar")
    if year % 400 == 0:
        return True
    if year % 100 == 0:
        return False
    return year % 4 == 0


def days_in_month(year: int, month: int) -> int:
    """Days of `month` (1–12) in `year`."""
    if month < 1 or month > 12:
        raise ValueError("month must be 1..12")
    if month == 2:
        return 29 if is_leap(year) else 28
    if month in (4, 6, 9, 11):
        return 30
    return 31
