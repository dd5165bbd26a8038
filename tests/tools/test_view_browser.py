"""`dfir view`'s page in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`, which `.ci/run` installs) driven by Selenium opens the page of the seed's data
alignment example (replicated nodes, a GE graph), and the DOM shows every node and edge drawn,
no errors logged, a GE node's details and its expansion. A screenshot lands in tmp_path."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from dfir.tools.cli import main as cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed_align.py"
CHROMEDRIVER = shutil.which("chromedriver")
# CI installs the browser, so there a missing one fails the tests instead of skipping them
pytestmark = pytest.mark.skipif((CHROMEDRIVER is None or shutil.which("chromium") is None) and not os.environ.get("CI"),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")

DRAWN = """
const shown = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
return Array.from(document.querySelectorAll(arguments[0])).filter(shown).map(el => el.id);
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The example's page and the scene data it embeds."""
    path = tmp_path_factory.mktemp("view") / "align.html"
    assert cli(["view", str(EXAMPLE), "-o", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def scene_of(browser) -> dict:
    return json.loads(browser.find_element(By.ID, "dfir-scene").get_attribute("textContent"))


def test_every_node_and_edge_is_drawn_without_errors(page, browser, tmp_path):
    browser.get(page.as_uri())
    scene = scene_of(browser)
    flow = scene["diagrams"]["d0"]
    assert flow["title"] == "df.graph @seed_align"
    labels = sorted(box["label"] for box in flow["boxes"].values())
    assert labels == ["gather 2", "gather 2", "model_a #0/2", "model_a #1/2", "model_b_fnode #0/2",
                      "model_b_fnode #1/2", "model_c_fnode\naligned (cache 256)", "model_x_fnode", "output", "x"]
    assert sorted(browser.execute_script(DRAWN, "#d0 g.node")) == sorted(flow["boxes"])
    assert sorted(browser.execute_script(DRAWN, "#d0 g.edge")) == sorted(flow["edges"])
    assert len(flow["edges"]) == 12
    clusters = [text.text for text in browser.find_elements(By.CSS_SELECTOR, "#d0 g.cluster > text")]
    assert sorted(clusters) == ["device 0:0:0:0", "device 0:0:1:0", "host 0:0:-1:0", "server 0:0"]
    assert not browser.find_element(By.ID, "d1").is_displayed()  # the GE graph starts collapsed
    shot = tmp_path / "align.png"
    assert browser.save_screenshot(str(shot)) and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")] == []


def test_clicking_a_node_shows_its_attributes_and_source_line(page, browser):
    browser.get(page.as_uri())
    node = next(id for id, box in scene_of(browser)["diagrams"]["d0"]["boxes"].items()
                if box["label"] == "model_b_fnode #1/2")
    browser.find_element(By.ID, node).click()
    details = browser.find_element(By.ID, "details")
    assert details.find_element(By.TAG_NAME, "h3").text == "model_b_fnode #1/2"
    line = EXAMPLE.read_text().splitlines().index("    b = model_b.fnode()(b_in)") + 1
    assert details.find_element(By.CLASS_NAME, "loc").text == f"seed_align.py:{line}"
    assert details.find_element(By.CLASS_NAME, "source").text == "b = model_b.fnode()(b_in)"
    attrs = dict(zip([e.text for e in details.find_elements(By.TAG_NAME, "dt")],
                     [e.text for e in details.find_elements(By.TAG_NAME, "dd")]))
    assert attrs["device"] == "#df.device<0:0:1:0>" and attrs["instance"] == "#df.instance<1 of 2>"
    assert attrs["dispatch"] == "round_robin" and attrs["pp.kind"] == "py_func"
    assert "selected" in browser.find_element(By.ID, node).get_attribute("class")


def test_expanding_a_ge_node_draws_its_ops(page, browser):
    browser.get(page.as_uri())
    scene = scene_of(browser)
    node = next(id for id, box in scene["diagrams"]["d0"]["boxes"].items() if box["label"] == "model_a #0/2")
    browser.find_element(By.ID, node).click()
    browser.find_element(By.CSS_SELECTOR, "#details button.expand").click()
    section = browser.find_element(By.ID, "d1")
    assert section.is_displayed() and "expanded" in section.get_attribute("class")
    ge = scene["diagrams"]["d1"]
    assert sorted(browser.execute_script(DRAWN, "#d1 g.node")) == sorted(ge["boxes"])
    assert sorted(browser.execute_script(DRAWN, "#d1 g.edge")) == sorted(ge["edges"])
    ops = sorted(box["label"].split("\n")[0] for box in ge["boxes"].values())
    assert ops == ["ge.const", "ge.data", "ge.matmul", "ge.output", "ge.relu"]
    matmul = next(id for id, box in ge["boxes"].items() if box["label"].startswith("ge.matmul"))
    ActionChains(browser).move_to_element(browser.find_element(By.ID, matmul)).click().perform()
    details = browser.find_element(By.ID, "details")
    assert details.find_element(By.TAG_NAME, "h3").text == "ge.matmul\n!ge.tensor<[-1, 4], f32>"
    assert "slots" in [e.text for e in details.find_elements(By.TAG_NAME, "dt")]
    section.find_element(By.CSS_SELECTOR, "button.collapse").click()
    assert not section.is_displayed()
    assert [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")] == []


def test_finding_nodes_by_name_and_zooming(page, browser):
    browser.get(page.as_uri())
    browser.find_element(By.ID, "find").send_keys("MODEL_B")
    found = browser.find_elements(By.CSS_SELECTOR, "#d0 g.node.found")
    assert sorted(scene_of(browser)["diagrams"]["d0"]["boxes"][g.get_attribute("id")]["label"] for g in found) == \
        ["model_b_fnode #0/2", "model_b_fnode #1/2"]
    browser.set_window_size(800, 1000)  # narrower than the drawing: fitted, it shrinks
    try:
        svg = browser.find_element(By.CSS_SELECTOR, "#d0 svg")
        fitted = svg.size["width"]
        zoom = browser.find_element(By.CSS_SELECTOR, "#d0 button.zoom")
        zoom.click()
        assert zoom.text == "fit" and svg.size["width"] > fitted * 1.2
        zoom.click()
        assert zoom.text == "actual size" and svg.size["width"] == fitted
    finally:
        browser.set_window_size(1400, 1000)
    assert [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")] == []
