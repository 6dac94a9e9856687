import click


def greeting(name):
    return f"Hello, {name}!"


@click.command()
@click.option("--name", default="world")
def cli(name):
    click.echo(greeting(name))


def main():
    cli(["--name", "ada"], standalone_mode=False)


main()
