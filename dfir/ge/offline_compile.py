"""Seed 002's `ge.offline_compile`: build and save models and bundles without running them."""
from dfir.driver.offline_compile import (GraphWithOptions, ModelBuffer, build_finalize,  # noqa: F401
                                         build_initialize, build_model, bundle_build_model,
                                         bundle_save_model, save_model)

__all__ = ["GraphWithOptions", "ModelBuffer", "build_finalize", "build_initialize", "build_model",
           "bundle_build_model", "bundle_save_model", "save_model"]
