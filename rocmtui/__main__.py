"""Entry point for ``python -m rocmtui``."""

if __name__ == "__main__":  # a spawned rank imports this module too: it pauses and runs nothing then
    from rocmtui.entry import entry

    entry()
