def is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def primes(limit):
    for n in range(limit):
        if is_prime(n):
            yield n


def main():
    for p in primes(20):
        print(p)


main()
