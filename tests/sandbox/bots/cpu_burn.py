"""Burns CPU forever."""

print("BURNING", flush=True)
x = 0
while True:
    x += 1
