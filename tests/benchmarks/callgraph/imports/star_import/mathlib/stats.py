__all__ = ["mean", "median"]


def mean(values):
    return _total(values) / len(values)


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _total(values):
    return sum(values)
