def save(data):
    return f"local:{data}"
