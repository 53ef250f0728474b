"""Ray's own set-up notices are kept out of a --ray run's output, its errors kept."""

from __future__ import annotations


def test_rays_setup_notices_are_kept_out_and_its_errors_kept() -> None:
    """--ray: Ray's token-authentication notice is Ray's, not a finding of the run."""
    import io
    import logging

    from perflab.engine.cluster_ray import quiet_ray_notices

    ray_logger = logging.getLogger("perflab-test-ray")
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    ray_logger.addHandler(handler)
    try:
        quiet_ray_notices(ray_logger)
        quiet_ray_notices(ray_logger)  # once is enough: no second filter
        assert len(handler.filters) == 1
        notice = logging.LogRecord(
            "ray._private.authentication.authentication_token_setup", logging.WARNING, "", 0,
            "Token authentication is enabled for this Ray cluster.", None, None,
        )  # fmt: skip
        failure = logging.LogRecord(
            "ray._private.authentication.x", logging.ERROR, "", 0, "bad token", None, None
        )
        other = logging.LogRecord("ray.worker", logging.WARNING, "", 0, "a task died", None, None)
        for record in (notice, failure, other):
            ray_logger.handle(record)
    finally:
        ray_logger.removeHandler(handler)
    said = written.getvalue()
    assert "Token authentication" not in said
    assert "bad token" in said and "a task died" in said
