"""Temperature conversion between Celsius, Fahrenheit and Kelvin."""


def to_celsius(value: float, unit: str) -> float:
    """`value` in `unit` ("C", "F" or "K") as Celsius."""
    unit = unit.upper()
    if unit == "C":
        result = value
    elif unit == "F":
        result = (value - 32) * 5 / 9
    elif unit == "K":
        result = value - 273.15
    else:
        raise ValueError(f"unknown unit {unit}")
    if result < -273.15:
        raise ValueError("below absolute zero")
    return result


def describe(celsius: float) -> str:
    """A word for the temperature."""
    if celsius < 0:
        return "freezing"
    if celsius < 15:
        return "cold"
    if celsius < 25:
        return "mild"
    if celsius < 35:
        return "warm"
    return "hot"
