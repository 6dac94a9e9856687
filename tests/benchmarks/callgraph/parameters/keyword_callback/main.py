def retry(operation, *, attempts, on_error):
    for attempt in range(attempts):
        try:
            return operation(attempt)
        except ValueError as exc:
            on_error(exc)
    return None


def flaky(attempt):
    if attempt == 0:
        raise ValueError("first attempt fails")
    return "ok"


def log_error(exc):
    print("retrying after", exc)


def main():
    print(retry(flaky, attempts=3, on_error=log_error))


main()
