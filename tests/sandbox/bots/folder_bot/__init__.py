"""The folder bot package (the loader imports bot.py as its submodule)."""
