"""The main job's Python demo: a known call chain, main -> build_report -> count_words -> tokenize,
run for argv[1] seconds (default 10)."""
import sys
import time

TEXT = "the quick brown fox jumps over the lazy dog " * 200


def tokenize(text):
    return [word.strip(".,") for word in text.split(" ") if word]


def count_words(text):
    counts = {}
    for word in tokenize(text):
        counts[word] = counts.get(word, 0) + 1
    return counts


def build_report(text):
    counts = count_words(text)
    return sorted(counts.items(), key=lambda item: -item[1])


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        build_report(TEXT)


if __name__ == "__main__":
    main()
