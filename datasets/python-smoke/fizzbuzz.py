"""FizzBuzz and a few variations on it."""


def fizzbuzz(n: int) -> str:
    """The FizzBuzz word for n."""
    if n <= 0:
        raise ValueError("n must be positive")
    if n % 15 == 0:
        return "FizzBuzz"
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    return str(n)


def count_words(limit: int) -> dict[str, int]:
    """How often each word occurs among the first `limit` numbers."""
    if limit > 1000:
        limit = 1000
    counts = {"Fizz": 0, "Buzz": 0, "FizzBuzz": 0, "number": 0}
    for i in range(1, limit + 1):
        word = fizzbuzz(i)
        if word.isdigit():
            counts["number"] += 1
        else:
            counts[word] += 1
    return counts
