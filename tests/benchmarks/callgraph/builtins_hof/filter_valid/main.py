def is_valid(email):
    return "@" in email and not is_blocked(email)


def is_blocked(email):
    return email.endswith("@spam.example")


def valid_emails(emails):
    return list(filter(is_valid, emails))


def main():
    emails = ["a@x.example", "b@spam.example", "nope"]
    print(valid_emails(emails), any(is_blocked(e) for e in emails))


main()
