"""The Source tab (indentation, highlighting, hot lines as Nsight Compute marks them) and the Metrics tab, as HTML and
as a browser shows the --html page."""

from __future__ import annotations

import math
import shutil
from html.parser import HTMLParser

import pytest

from kernel_lab import api, samples
from kernel_lab.display import metrics, source
from kernel_lab.profiling import report


def kernel(name: str):
    return report.load(samples.report(name)).kernels[0]


class Rows(HTMLParser):
    """The source table's rows: (row class, [(cell class, cell text), ...])."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, list[tuple[str, str]]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tr":
            self.rows.append((dict(attrs).get("class") or "", []))
        elif tag in ("td", "th"):
            self.rows[-1][1].append((dict(attrs).get("class") or "", ""))
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            cls, _ = self.rows[-1][1][-1]
            self.rows[-1][1][-1] = (cls, "".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def rows(html: str) -> list[tuple[str, list[tuple[str, str]]]]:
    parser = Rows()
    parser.feed(html)
    return parser.rows


def code_lines(html: str) -> list[str]:
    return [text for _, cells in rows(html) for cls, text in cells if cls == "code"][1:]  # the first is the header


def test_indentation_is_kept_in_a_white_space_pre_cell():
    k = kernel("uncoalesced_global")
    html = source.render(k)
    lines = code_lines(html)
    original = k.source_files["kernel_lab/samples/kernels/uncoalesced_global.py"].splitlines()
    assert lines == original  # every character, leading spaces included, in order
    assert "    tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)" in lines
    rule = source.STYLE.split(".kl-src table.src td.code {")[1].split("}")[0]
    assert "white-space: pre" in rule and "monospace" in rule and "text-align: left" in rule


def test_python_and_cuda_are_highlighted():
    python = source.render(kernel("uncoalesced_global"))
    assert "<span class='k'>def</span> <span class='nf'>strided_copy_kernel</span>" in python
    cuda = source.render(kernel("shared_bank_conflicts"))
    assert "<span class='kt'>float</span>" in cuda or "<span class='kt'>int</span>" in cuda
    assert ".kl-src td.code .k {" in source.STYLE and "}pre {" not in source.STYLE  # token colours only, scoped


def test_a_token_over_several_lines_is_split_line_by_line():
    lines = ('x = """first', "    second", '"""', "y = 1")
    out = source.highlight(lines, "cell.py")
    assert len(out) == 4 and all(line.count("<span") == line.count("</span>") for line in out)
    assert out[1] == "<span class='s2'>    second</span>"


@pytest.mark.parametrize(
    ("name", "counter", "column"),
    [
        ("uncoalesced_global", "stall_samples", "stall samples"),
        ("shared_bank_conflicts", "shared_excessive_wavefronts", "bank-conflict wavefronts"),
    ],
)
def test_hot_lines_carry_their_share_and_are_tinted(name, counter, column):
    k = kernel(name)
    per_line = k.line_counters[counter]
    (file, hottest), value = max(per_line.items(), key=lambda item: item[1])
    share = value / sum(per_line.values())
    table = rows(source.render(k))
    header = next(cells for _, cells in table if cells and cells[0][1] == "line")
    position = [text for _, text in header].index(column)
    (row_class, cells) = next((cls, cells) for cls, cells in table if cells and cells[0] == ("ln", str(hottest)))
    assert row_class == "hot" and cells[position] == ("bar", f"{share:.0%}")
    assert f"#f08a5d {share * 100:.0f}%" in source.render(k)  # the bar's length is the share
    hot = {int(cells[0][1]) for cls, cells in table if cls == "hot"}
    totals = {c: sum(k.line_counters.get(c, {}).values()) for c in source.COLUMNS}
    expected = {
        ln
        for c in source.COLUMNS
        if totals[c]
        for (f, ln), v in k.line_counters[c].items()
        if f == file and v / totals[c] >= source.HOT
    }
    assert hottest in hot and hot == expected  # the lines holding 1% or more of a counter, and only those, are tinted


def test_a_long_file_shows_the_lines_around_its_hot_ones():
    k = kernel("latency_bound")
    html = source.render(k)
    assert "sm_30_intrinsics.hpp" in html and "⋯ 368 lines" in html
    numbers = [int(cells[0][1]) for _, cells in rows(html) if cells and cells[0][0] == "ln"]
    assert 373 in numbers and 100 not in numbers


def test_an_array_metric_shows_as_its_values_not_as_their_sum():
    """Nsight Compute's one value for the occupancy curve (% per block size) is the sum of its 65 points."""
    df = api.diagnose(samples.report("memory_bound")).df
    curve = df[df.metric == "derived__pct_occupancy_per_block_size"].iloc[0]
    assert curve.value == sum(curve.instances) == 5706 and len(curve.instances) == 65 and max(curve.instances) == 100
    assert df[df.metric == "launch__grid_size"].instances.item() is None  # a plain value has none
    table = metrics.table(df)
    shown = dict(zip(table.metric, table.value))
    assert shown["derived__pct_occupancy_per_block_size"] == "65 values, 50% to 100%"
    assert shown["thread_inst_executed"] == "41 values, each 2,097,152 inst"  # one per SASS PC
    assert not any(v.endswith("%") and float(v.rstrip("%").replace(",", "")) > 200 for v in shown.values() if "values" not in v)


def test_the_metrics_tab_opens_on_throughput_with_readable_numbers():
    df = api.diagnose(samples.report("uncoalesced_global")).df
    assert df.metric.iloc[0].startswith("c2clink") and "section0" in set(df.section)  # what the raw table opened on
    table = metrics.table(df)
    names = metrics.sections(table)
    assert names[0] == "Throughput (speed of light)" and names[1] == "Memory" and names[-1] == metrics.INTERNAL
    assert "section0" not in names and "" not in names
    assert not table.metric.iloc[0].startswith(("c2clink", "derived_temp"))
    internal = table[table.section == metrics.INTERNAL].metric
    assert set(internal) == {m for m in df.metric if m.startswith(("c2clink", "derived_temp"))}
    assert len(table) == len(df)  # ordered, nothing dropped
    assert not table.value.str.contains(r"\de[+-]\d").any()  # no scientific notation
    duration = table[table.metric == "gpu__time_duration.sum"].value.item()
    assert duration == f"{df[df.metric == 'gpu__time_duration.sum'].value.item():,.0f} ns"


def test_numbers_read_with_separators_fixed_decimals_and_units():
    assert metrics.fmt(1234567.0, "") == "1,234,567"
    assert metrics.fmt(96.7231, "%") == "96.72%"
    assert metrics.fmt(1.966e9, "hz") == "1.97 GHz"
    assert metrics.fmt(6.04e8, "byte") == "604.00 MB"
    assert metrics.fmt(8.5087e11, "byte/s") == "850.87 GB/s"
    assert metrics.fmt(276462.5, "cycle") == "276,462.5 cycle"
    assert metrics.fmt(0.000123, "") == "0.000123"
    assert metrics.fmt(math.nan, "inst") == "–"


def test_the_dashboard_metrics_view_lists_sections_in_reading_order():
    import ipywidgets as widgets

    from kernel_lab.widgets.dashboard import metrics_view

    view = metrics_view(api.diagnose(samples.report("uncoalesced_global")), widgets.Output())
    section, _ = view.children[0].children
    assert section.options[1] == "Throughput (speed of light)" and "section0" not in section.options
    _, heading, (_, first) = rows(view.children[1].value)[:3]
    assert heading == ("section", [("", "Throughput (speed of light)")])
    assert first[0][1] == "dram__cycles_elapsed.avg.per_second" and first[1][1].endswith(" GHz")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(not chromium(), reason="Chromium not installed (scripts/setup.sh installs it)")
def test_the_html_page_shows_source_indented_left_aligned_and_scrolling_in_its_box(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    path = tmp_path / "page.html"
    api.diagnose(samples.report("uncoalesced_global")).save_html(path)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 700, "height": 800})
        page.goto(path.as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        seen = page.evaluate(
            """() => {
            const cells = [...document.querySelectorAll('.kl-src td.code')];
            const store = cells.find(c => c.textContent.includes('tl.store('));
            const style = getComputedStyle(store), box = document.querySelector('.kl-src .srcbox');
            return {text: store.textContent, space: style.whiteSpace, align: style.textAlign, width: store.getBoundingClientRect().width,
                    box: [box.scrollWidth, box.clientWidth], page: [document.documentElement.scrollWidth, window.innerWidth]};
        }"""
        )
        browser.close()
    assert seen["text"].startswith("    tl.store(") and seen["space"] == "pre" and seen["align"] == "left"
    assert seen["box"][0] > seen["box"][1]  # the long lines scroll inside the box...
    assert seen["page"][0] <= seen["page"][1]  # ...and do not widen the page


def test_a_static_html_export_keeps_the_indentation_and_says_where_the_kernel_stands():
    """nbconvert's HTML export (what a notebook shared as a page shows, without widgets or network)."""
    import nbformat
    from nbconvert import HTMLExporter

    result = api.diagnose(samples.report("uncoalesced_global"))
    nb = nbformat.v4.new_notebook()
    output = nbformat.v4.new_output("display_data", data={"text/html": result._repr_html_(), "text/plain": "result"})
    nb.cells = [nbformat.v4.new_code_cell("%%profile", outputs=[output])]
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert "    tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)" in code_lines(body)
    assert "strided_copy_kernel (launch 0): no floating-point work; at 25% of the DRAM roof (DRAM bytes moved)" in body


def test_a_hot_line_in_library_code_says_it_was_inlined_into_the_kernel():
    from kernel_lab.display.words import source_ref
    from kernel_lab.models import SourceLine

    reduce = SourceLine("/venv/lib/python3.12/site-packages/triton/language/standard.py", 293, 0.75, "return core.reduce(...)")
    own = SourceLine("/home/me/cell.py", 51, 0.19, "for d0 in range(0, days, BLOCK_D):")
    assert source_ref(reduce) == "standard.py:293 (75%, library code inlined into the kernel)  return core.reduce(...)"
    assert source_ref(own) == "cell.py:51 (19%)  for d0 in range(0, days, BLOCK_D):"
