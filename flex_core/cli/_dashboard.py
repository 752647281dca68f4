"""``flex dashboard [DIR]``: start FLEX Studio, on a project folder when given."""

from __future__ import annotations

import argparse


def add_dashboard_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "dashboard",
        help="start FLEX Studio, the interactive app (Streamlit), on a project folder written by explainer.save(DIR)",
        description="Start FLEX Studio (needs the app extra: pip install \"flex-studio[app]\"). Generated "
        "counterfactuals are kept under FLEX_CACHE_DIR, default .flex_cache in the folder it starts in.",
    )
    parser.add_argument("directory", nargs="?", metavar="DIR",
                        help="a project folder written by FlexExplainer.save(DIR) (data.csv, model.skops, settings.json)")
    parser.add_argument("--port", type=int, help="the port to serve on (default: Streamlit's, 8501 or the next free one)")
    parser.add_argument("--browser", action="store_true", help="open a browser tab (default: headless, print the URL)")
    parser.add_argument("--hosted", action="store_true",
                        help="serve a team (also when FLEX_HOSTED=1): uploads only, and the production settings of "
                        ".streamlit/hosted.toml (listen on 127.0.0.1 behind a proxy, no error details, viewer toolbar)")
    return parser


def run_dashboard(args) -> int:
    """Check DIR, the port and that Streamlit is installed (each a one-line error), then run the app in the foreground."""
    from .. import dashboard as launcher
    from .._project import check_project_folder

    project = check_project_folder(args.directory) if args.directory is not None else None
    launcher.dashboard_command(project, port=args.port)  # checks the port and that the app's files are installed
    return launcher.run_dashboard(project, port=args.port, open_browser=args.browser, hosted=args.hosted)
