"""The web page's Matter card against a commissioned hearthd (run by bridge_controller.py with
Debian's python3 and its Selenium, headless Chromium, inside the test namespace): signs in as the
admin, opens the Exposure view, expects a row per fabric ID given, and removes fabric INDEX with
its Remove button (the confirm dialog accepted); the row goes and the toast says so.

Usage: web_fabrics.py BASE_URL PASSWORD INDEX FABRIC_ID[,FABRIC_ID…]
Prints 'ok: …'; exits 1 with 'FAIL: …' otherwise.
"""
import shutil
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

BASE, PASSWORD, INDEX, IDS = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")

options = webdriver.ChromeOptions()
options.binary_location = shutil.which("chromium")
for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--disable-gpu"):
    options.add_argument(a)
driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
step = "starting"
try:
    wait = WebDriverWait(driver, 20)
    step = "signing in"
    driver.get(BASE + "/")
    form = wait.until(EC.visibility_of_element_located((By.ID, "login-form")))
    form.find_element(By.NAME, "username").clear()  # the page may prefill it
    form.find_element(By.NAME, "username").send_keys("admin")
    form.find_element(By.NAME, "password").send_keys(PASSWORD)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "admin"))
    step = "opening the Exposure view"
    driver.find_element(By.CSS_SELECTOR, 'nav a[data-view="exposure"]').click()
    rows = "#matter-body table.fabrics tbody tr"
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, rows)) == len(IDS))
    shown = [r.text for r in driver.find_elements(By.CSS_SELECTOR, rows)]
    for fabric in IDS:
        if not any(f"0x{fabric}" in text for text in shown):
            print(f"FAIL: fabric 0x{fabric} is not in the page's fabric list {shown}", flush=True)
            sys.exit(1)
    step = "removing the fabric"
    driver.execute_script("window.confirm = () => true")
    driver.find_element(By.CSS_SELECTOR, f'#matter-body tr[data-fabric="{INDEX}"] button.remove-fabric').click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "toast"), f"Fabric {INDEX} removed"))
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, f'#matter-body tr[data-fabric="{INDEX}"]'))
    left = [r.text for r in driver.find_elements(By.CSS_SELECTOR, rows)]
    print(f"ok: the web page listed the fabrics {shown}; its Remove button removed fabric {INDEX}, leaving {left}", flush=True)
except Exception as error:  # noqa: BLE001 (any failure of the page is the test's failure)
    body = driver.find_element(By.TAG_NAME, "body").text.replace("\n", " | ")[:1500]
    print(f"FAIL: the web page's Matter card while {step}: {error!r}; the page reads: {body}", flush=True)
    sys.exit(1)
finally:
    driver.quit()
