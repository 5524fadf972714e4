"""A bank account with an overdraft limit."""


class Account:
    """Balance in cents; withdrawals may go down to -overdraft."""

    def __init__(self, owner: str, overdraft: int = 0) -> None:
        if not owner:
            raise ValueError("owner required")
        if overdraft < 0:
            raise ValueError("overdraft must not be negative")
        self.owner = owner
        self.overdraft = overdraft
        self.balance = 0
        self.frozen = False

    def deposit(self, amount: int) -> int:
        """Adds money; returns the new balance."""
        if self.frozen:
            raise RuntimeError("account frozen")
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.balance += amount
        return self.balance

    def withdraw(self, amount: int) -> int:
        """Takes money out; returns the new balance."""
        if self.frozen:
            raise RuntimeError("account frozen")
        if amount <= 0:
            raise ValueError("amount must be positive")
        if self.balance - amount < -self.overdraft:
            raise ValueError("insufficient funds")
        self.balance -= amount
        return self.balance

    def freeze(self) -> None:
        """Stops deposits and withdrawals."""
        self.frozen = True

    def status(self) -> str:
        """A short description of the account's state."""
        if self.frozen:
            return "frozen"
        if self.balance < 0:
            return "overdrawn"
        if self.balance == 0:
            return "empty"
        return "ok"
