"""Generated gRPC stubs of the Arboretum Arena protocol (regenerate with scripts/gen_proto)."""
