"""The MLE-Dojo task family: readers, the embedded offline pool and the environment."""
