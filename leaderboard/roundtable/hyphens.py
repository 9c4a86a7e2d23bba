"""Soft hyphens in long words, so that a narrow column header can break them."""

CONSONANTS = set("bcdfghjklmnpqrstvwxz")


def hyphenable(text: str) -> str:
    """Long words with a soft hyphen (U+00AD) between two consonants near their middle, so that a
    narrow benchmark header can break them ("Recommen-dation") instead of widening its column."""

    def split(word: str) -> str:
        if len(word) < 12 or not word.isalpha():  # "(DLRM-DCNv2)" stays whole
            return word
        middle = len(word) // 2
        for i in sorted(range(3, len(word) - 3), key=lambda i: abs(i - middle)):
            if word[i - 1].lower() in CONSONANTS and word[i].lower() in CONSONANTS:
                return word[:i] + "\u00ad" + word[i:]
        return word[:middle] + "\u00ad" + word[middle:]

    return " ".join(split(w) for w in text.split(" "))
