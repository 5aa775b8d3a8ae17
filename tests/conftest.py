"""The whole suite runs gRPC as the arena's processes do (``arboretum_sdk.grpc_setup``): the
setting must be in place before anything imports grpc, and this file is loaded first."""

from arboretum_sdk import grpc_setup

grpc_setup.apply()
