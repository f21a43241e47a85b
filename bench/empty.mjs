// Intentionally empty: the cost of starting node on a script file.
