"""A bounded stack."""


class Stack:
    """A stack that holds at most `capacity` items."""

    def __init__(self, capacity: int = 4) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self._items: list[int] = []
        self._capacity = capacity

    def push(self, item: int) -> None:
        """Puts an item on top."""
        if self.is_full():
            raise OverflowError("stack is full")
        self._items.append(item)

    def pop(self) -> int:
        """Takes the top item off."""
        if self.is_empty():
            raise IndexError("stack is empty")
        return self._items.pop()

    def peek(self) -> int:
        """The top item."""
        if self.is_empty():
            raise IndexError("stack is empty")
        return self._items[-1]

    def is_empty(self) -> bool:
        """Whether the stack holds nothing."""
        return not self._items

    def is_full(self) -> bool:
        """Whether the stack is at capacity."""
        return len(self._items) >= self._capacity
