def digest(data):
    return sum(map(ord, data)) % 256
