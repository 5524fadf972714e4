"""Searching sorted lists."""


def binary_search(items: list[int], target: int) -> int:
    """Index of `target` in the sorted list `items`, or -1."""
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target:
            return mid
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def insertion_point(items: list[int], target: int) -> int:
    """Where `target` would go to keep `items` sorted."""
    for i, x in enumerate(items):
        if x >= target:
            return i
    return len(items)
