"""Body-mass index."""


def bmi(weight_kg: float, height_m: float) -> float:
    """The body-mass index."""
    if weight_kg <= 0 or height_m <= 0:
        raise ValueError("weight and height must be positive")
    if height_m > 3:
        raise ValueError("height in metres, not centimetres")
    return weight_kg / (height_m * height_m)


def category(index: float) -> str:
    """The WHO category of a body-mass index."""
    if index < 16:
        return "severely underweight"
    if index < 18.5:
        return "underweight"
    if index < 25:
        return "normal"
    if index < 30:
        return "overweight"
    return "obese"
