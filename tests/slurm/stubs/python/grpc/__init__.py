"""SIMULATOR STAND-IN marker, for TunePlane's tests only: makes `grpc` importable, which is
how Ray (and the batch script's node launcher) decide that ray[client] is installed, so the
tests cover the Ray client server's port. It is not gRPC and has no API."""
