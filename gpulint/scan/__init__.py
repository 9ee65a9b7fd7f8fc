"""The engine: strings the stages together for one scan, in one process or several."""
