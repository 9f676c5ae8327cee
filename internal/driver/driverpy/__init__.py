# The placement-group driver, one module per concern. The job runs them joined
# into one script (internal/driver/source.go, driverModules); tests import them
# as this package (tests/, with a fake ray: tests/fake_ray.py).
