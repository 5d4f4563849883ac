"""The vocabulary every layer shares: the microservices' catalogue, the sample row, the
in-container loop's protocol, container labels, what a run's execute() gets, the order runs
start in, the run cost models and the source reader that derives each step's code inputs."""
