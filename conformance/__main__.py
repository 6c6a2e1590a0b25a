from conformance.cli import console

console()
