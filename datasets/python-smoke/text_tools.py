"""Small text utilities."""


def is_palindrome(text: str) -> bool:
    """Whether `text` reads the same backwards, ignoring case and non-letters."""
    letters = [c.lower() for c in text if c.isalpha()]
    if not letters:
        return False
    return letters == letters[::-1]


def caesar(text: str, shift: int) -> str:
    """Shifts letters by `shift` places, keeping case; other characters stay."""
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - ord("a") + shift) % 26 + ord("a")))
        elif "A" <= c <= "Z":
            out.append(chr((ord(c) - ord("A") + shift) % 26 + ord("A")))
        else:
            out.append(c)
    return "".join(out)


def word_kind(word: str) -> str:
    """A rough class of a word."""
    if not word:
        return "empty"
    if word.isdigit():
        return "number"
    if word.isupper():
        return "shout"
    if word[0].isupper():
        return "name"
    return "word"
