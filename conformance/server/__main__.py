from .serve import main

main()
