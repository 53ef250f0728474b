"""`perflab publish`: every benchmark's history through each lens, as a static site built from the
store. The site has a front page with the recent change points and a grid of trends, a page per
trend and a page per run, and is written incrementally: the trends (`trends`) read each run's
figures, kept in the site's folder so a run is analysed once (`figures`); the pages are rendered
only where what they are made from changed (`manifest`, `writer`)."""

from perflab.publish.figures import SiteRuns
from perflab.publish.trends import commit_line, read_site
from perflab.publish.writer import publish

__all__ = ["SiteRuns", "commit_line", "publish", "read_site"]
