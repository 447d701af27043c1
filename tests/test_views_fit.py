"""The Summary tab's table and the roofline chart as Chromium draws them in a laptop's notebook: JupyterLab's output
area is 894 px wide at 1366x768. Nothing of the table may hide behind a scroll, and no label of the chart may
leave the plot (tests/test_extension.py checks the whole dashboard in a real JupyterLab)."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from kernel_lab import api, course, samples
from kernel_lab.display import html
from kernel_lab.models import Profile
from kernel_lab.results.profile import Result

BOX = 894  # px: the output area of a notebook cell in JupyterLab at 1366x768
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(not CHROMIUM, reason="Chromium not installed (scripts/setup.sh installs it)")

#: a table's width, the width of what it holds and whether it shows, for each table of the page (the summary and the
#: one a click opens)
TABLES = "() => [...document.querySelectorAll('table.summary')].map(t => [t.clientWidth, t.scrollWidth, t.checkVisibility()])"
#: every text label of the plot, and the plot area's box: [left, right, top, bottom] each
LABELS = """() => {
  const area = document.querySelector('.nsewdrag').getBoundingClientRect();
  return [[area.left, area.right, area.top, area.bottom],
          [...document.querySelectorAll('.textpoint text')].filter(t => t.textContent).map(t => {
              const r = t.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })];
}"""


def long_named() -> Result:
    """Lesson 6's three kernels, one of them with a C++ template's name as long as a CUTLASS kernel's."""
    result = api.diagnose(course.report("06_fusion", "naive"))
    name = "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_16x3_nn_align4_warpspecialized_cooperative>"
    kernels = (replace(result.profile.kernels[0], name=name), *result.profile.kernels[1:])
    profile = Profile(kernels, result.profile.origin, result.profile.collector, replay=True)
    return Result(profile, tuple(replace(d, kernel=k) for d, k in zip(result.diagnoses, kernels, strict=True)))


def results() -> dict[str, Result]:
    return {
        "lesson 6 naive (three kernels)": api.diagnose(course.report("06_fusion", "naive")),
        "lesson 1 naive": api.diagnose(course.report("01_roofline", "naive")),
        "lesson 1 reference": api.diagnose(course.report("01_roofline", "reference")),
        "bf16 GEMM (the longest roof's name)": api.diagnose(samples.report("bf16_gemm")),
        "a long kernel name": long_named(),
    }


@pytest.fixture(scope="module")
def page():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser.new_page(viewport={"width": BOX + 40, "height": 900})
        browser.close()


def show(page, body: str) -> None:
    page.set_content(f"<!DOCTYPE html><html><body style='margin: 10px'><div style='width: {BOX}px'>{body}</div></body></html>")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(results()))
def test_the_summary_table_fits_a_laptop_s_notebook_and_the_rest_is_a_click_away(page, name):
    result = results()[name]
    show(page, html.render(result))
    ((width, holds, shown), (_, _, more)) = page.evaluate(TABLES)
    assert shown and width <= BOX and holds <= width, f"{name}: the table needs {holds} px of {width}"
    assert not more  # closed: the other columns wait for the click
    page.click("details.more > summary")
    ((_, _, _), (width, holds, more)) = page.evaluate(TABLES)
    assert more and 0 < holds <= width <= BOX, f"{name}: the other columns need {holds} px of {width}"
    headers = page.evaluate("() => [...document.querySelectorAll('table.summary th')].map(t => t.textContent)")
    assert {"µs", "roofline", "top bottleneck", "grid", "block", "waves", "DRAM bytes"} <= set(headers)


def test_the_roofline_column_says_the_chart_s_figure():
    result = api.diagnose(course.report("06_fusion", "naive"))
    cells = html._summary_table(result)
    for r in result.rooflines:
        assert f"<td class='roof_pct'>{r.label().removeprefix('no floating-point work; ').removeprefix('at ')}</td>" in cells


@pytest.mark.slow
@pytest.mark.parametrize("chart", ["lesson 1", "lesson 1 fix", "lesson 6 naive", "bf16 GEMM"])
def test_no_label_of_the_roofline_leaves_the_plot(page, chart):
    fig = {
        "lesson 1": lambda: course.roofline("01_roofline"),
        "lesson 1 fix": lambda: course.solution("01_roofline.fix").roofline(),
        "lesson 6 naive": lambda: api.diagnose(course.report("06_fusion", "naive")).roofline(),
        "bf16 GEMM": lambda: api.diagnose(samples.report("bf16_gemm")).roofline(),
    }[chart]()
    show(page, fig.to_html(full_html=False, include_plotlyjs=True))
    page.wait_for_selector(".nsewdrag")
    (left, right, top, bottom), labels = page.evaluate(LABELS)
    assert labels, f"{chart}: no label at all"
    for box in labels:
        assert left <= box[0] and box[1] <= right and top <= box[2] and box[3] <= bottom, f"{chart}: a label at {box}"
