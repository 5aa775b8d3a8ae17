GREETING = "hello from a helper module"
