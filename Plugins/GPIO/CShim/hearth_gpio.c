// The dispatcher of hearth_gpio.h: loads libgpiod at run time (no link-time dependency) and
// forwards every call to the v2 or v1 backend.
#define _GNU_SOURCE
#include "hg_backend.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const hg_ops *ops;
static char description[512];
static char version[32];
static char path[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

int hg_saved_errno(void) { return errno > 0 ? errno : EIO; }

void hg_set_nonblocking(int fd) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/// Tries one library; 1 when it is usable.
static int try_library(const char *name, char *why, size_t size) {
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(why, size, "%s", dlerror());
        return 0;
    }
    const char *missing = NULL;
    // Both sonames follow their API: .so.3 is libgpiod 2.x (v2), .so.2 is libgpiod 1.x (v1);
    // a library given by path is recognised by its symbols.
    const hg_ops *bound = dlsym(library, "gpiod_api_version") ? hg_v2_bind(library, &missing)
                                                              : hg_v1_bind(library, &missing);
    if (!bound) {
        snprintf(why, size, "%s lacks %s", name, missing ? missing : "the libgpiod API");
        dlclose(library);
        return 0;
    }
    ops = bound;
    snprintf(version, sizeof version, "%s", ops->version());
    Dl_info info;
    void *symbol = dlsym(library, "gpiod_chip_open");
    if (symbol && dladdr(symbol, &info) && info.dli_fname) snprintf(path, sizeof path, "%s", info.dli_fname);
    const char *base = strrchr(path, '/');
    snprintf(description, sizeof description, "libgpiod %s (v%d API, %s)", version, ops->api, base ? base + 1 : name);
    return 1;
}

static void load(void) {
    static const char advice[] =
        "install the package libgpiod3 (Debian 13, Raspberry Pi OS Trixie) or libgpiod2 (Debian 12, Raspberry Pi OS "
        "Bookworm): 'sudo apt install libgpiod3' (or libgpiod2)";
    const char *forced = getenv("HEARTH_LIBGPIOD");
    char why[200] = "";
    if (forced && forced[0]) {
        if (!try_library(forced, why, sizeof why))
            snprintf(description, sizeof description, "libgpiod not found (HEARTH_LIBGPIOD=%s: %s): %s", forced, why,
                     advice);
        return;
    }
    if (try_library("libgpiod.so.3", why, sizeof why)) return;
    if (try_library("libgpiod.so.2", why, sizeof why)) return;
    snprintf(description, sizeof description, "libgpiod not found (neither libgpiod.so.3 nor libgpiod.so.2): %s", advice);
}

int hg_backend_load(void) {
    pthread_once(&once, load);
    return ops ? ops->api : 0;
}

const char *hg_backend_description(void) {
    hg_backend_load();
    return description;
}

const char *hg_backend_version(void) {
    hg_backend_load();
    return version;
}

const char *hg_backend_path(void) {
    hg_backend_load();
    return path;
}

int hg_backend_has_kernel_debounce(void) { return hg_backend_load() ? ops->kernel_debounce : 0; }

static int is_device(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

hg_chip *hg_chip_open(const char *spec, int *error) {
    if (!hg_backend_load()) {
        *error = ELIBACC;
        return NULL;
    }
    char candidate[300];
    if (spec[0] == '/') return ops->chip_open(spec, error);
    // By name (/dev/<name>) first: its errno tells a permission problem from a missing chip.
    snprintf(candidate, sizeof candidate, "/dev/%s", spec);
    int first = 0;
    hg_chip *chip = ops->chip_open(candidate, &first);
    if (chip) return chip;
    // A number: /dev/gpiochipN.
    char *end = NULL;
    long number = strtol(spec, &end, 10);
    if (end && end != spec && *end == 0 && number >= 0) {
        snprintf(candidate, sizeof candidate, "/dev/gpiochip%ld", number);
        int ignored = 0;
        if ((chip = ops->chip_open(candidate, &ignored))) return chip;
    }
    // By label: every chip is asked.
    DIR *dir = opendir("/dev");
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir))) {
            if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
            snprintf(candidate, sizeof candidate, "/dev/%s", entry->d_name);
            if (!is_device(candidate)) continue;
            int ignored = 0;
            hg_chip *c = ops->chip_open(candidate, &ignored);
            if (!c) continue;
            if (strcmp(ops->chip_label(c), spec) == 0) {
                chip = c;
                break;
            }
            ops->chip_close(c);
        }
        closedir(dir);
    }
    if (chip) return chip;
    *error = (first == EACCES || first == EPERM || first == ENOTTY || first == ENODEV) ? first : ENOENT;
    return NULL;
}

void hg_chip_close(hg_chip *chip) {
    if (chip) ops->chip_close(chip);
}
const char *hg_chip_name(hg_chip *chip) { return ops->chip_name(chip); }
const char *hg_chip_label(hg_chip *chip) { return ops->chip_label(chip); }
unsigned int hg_chip_num_lines(hg_chip *chip) { return ops->chip_num_lines(chip); }
int hg_chip_find_line(hg_chip *chip, const char *name) { return ops->chip_find_line(chip, name); }
int hg_chip_line_consumer(hg_chip *chip, unsigned int offset, char *buffer, size_t size) {
    return ops->chip_line_consumer(chip, offset, buffer, size);
}
int hg_chip_watch_line(hg_chip *chip, unsigned int offset) { return ops->chip_watch_line(chip, offset); }
int hg_chip_info_fd(hg_chip *chip) { return ops->chip_info_fd(chip); }
int hg_chip_read_info_event(hg_chip *chip, hg_info_event *event) { return ops->chip_read_info_event(chip, event); }
void hg_chip_unwatch(hg_chip *chip) {
    if (chip) ops->chip_unwatch(chip);
}

hg_line *hg_line_request_input(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int bias,
                               unsigned int debounce_us, int *error) {
    return ops->request_input(chip, offset, consumer, active_low, bias, debounce_us, error);
}
hg_line *hg_line_request_output(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int value,
                                int *error) {
    return ops->request_output(chip, offset, consumer, active_low, value, error);
}
int hg_line_get_value(hg_line *line) { return ops->get_value(line); }
int hg_line_set_value(hg_line *line, int value) { return ops->set_value(line, value); }
int hg_line_event_fd(hg_line *line) { return ops->event_fd(line); }
int hg_line_read_events(hg_line *line, hg_event *events, unsigned int max) {
    return ops->read_events(line, events, max);
}
void hg_line_release(hg_line *line) {
    if (line) ops->release(line);
}

int hg_wake_fd(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

int hg_kernel_uapi(const char *chip_path) {
    int fd = open(chip_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -hg_saved_errno();
    int result = 0;
    struct gpioline_info v1 = {.line_offset = 0};
    if (ioctl(fd, GPIO_GET_LINEINFO_IOCTL, &v1) == 0) result |= 1;
    struct gpio_v2_line_info v2;
    memset(&v2, 0, sizeof v2);
    if (ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, &v2) == 0) result |= 2;
    close(fd);
    return result;
}
