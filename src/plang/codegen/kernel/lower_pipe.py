"""placeholder"""


def register(table: dict) -> None:
    pass
