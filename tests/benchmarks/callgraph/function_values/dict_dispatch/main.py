def add(stack):
    stack.append(stack.pop() + stack.pop())


def dup(stack):
    stack.append(stack[-1])


COMMANDS = {"add": add, "dup": dup}


def run(program):
    stack = [1]
    for word in program.split():
        COMMANDS[word](stack)
    return stack


def main():
    print(run("dup add"))


main()
