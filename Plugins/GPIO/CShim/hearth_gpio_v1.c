// libgpiod v1 (1.5/1.6: `libgpiod.so.2`, Debian 12, Raspberry Pi OS Bookworm) backend of
// hearth_gpio.h, bound at run time with dlsym. The v1 API has no debounce (the plugin debounces
// in software) and no line-info watch (the kernel's v1 uAPI watch is used directly).
#include "hg_backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

// The libgpiod 1.x declarations this backend uses (its documented API; the opaque types stay
// opaque). Request types and flags as libgpiod 1.x numbers them.
struct gpiod_chip;
struct gpiod_line;
struct gpiod_line_request_config {
    const char *consumer;
    int request_type;
    int flags;
};
struct gpiod_line_event {
    struct timespec ts;
    int event_type;
};
enum {
    V1_REQUEST_DIRECTION_OUTPUT = 3,
    V1_REQUEST_EVENT_BOTH_EDGES = 6,
    V1_FLAG_ACTIVE_LOW = 1 << 2,
    V1_FLAG_BIAS_DISABLE = 1 << 3,
    V1_FLAG_BIAS_PULL_DOWN = 1 << 4,
    V1_FLAG_BIAS_PULL_UP = 1 << 5,
    V1_EVENT_RISING_EDGE = 1,
};

static struct {
    const char *(*version_string)(void);
    struct gpiod_chip *(*chip_open)(const char *path);
    void (*chip_close)(struct gpiod_chip *chip);
    const char *(*chip_name)(struct gpiod_chip *chip);
    const char *(*chip_label)(struct gpiod_chip *chip);
    unsigned int (*chip_num_lines)(struct gpiod_chip *chip);
    struct gpiod_line *(*chip_find_line)(struct gpiod_chip *chip, const char *name);
    struct gpiod_line *(*chip_get_line)(struct gpiod_chip *chip, unsigned int offset);
    unsigned int (*line_offset)(struct gpiod_line *line);
    int (*line_update)(struct gpiod_line *line);
    const char *(*line_consumer)(struct gpiod_line *line);
    int (*line_is_used)(struct gpiod_line *line);
    int (*line_request)(struct gpiod_line *line, const struct gpiod_line_request_config *config, int default_val);
    int (*line_event_get_fd)(struct gpiod_line *line);
    int (*line_get_value)(struct gpiod_line *line);
    int (*line_set_value)(struct gpiod_line *line, int value);
    int (*line_event_read_fd_multiple)(int fd, struct gpiod_line_event *events, unsigned int num_events);
    void (*line_release)(struct gpiod_line *line);
} g;

typedef struct {
    struct gpiod_chip *chip;
    int watch_fd;  // the kernel's line-info watch, on a chip descriptor of our own
} v1_chip;

typedef struct {
    struct gpiod_line *line;
    int is_input;
} v1_line;

#define CHIP(c) ((v1_chip *)(void *)(c))
#define LINE(l) ((v1_line *)(void *)(l))

static const char *version(void) { return g.version_string(); }

static hg_chip *chip_open(const char *path, int *error) {
    errno = 0;
    struct gpiod_chip *chip = g.chip_open(path);
    if (!chip) {
        *error = hg_saved_errno();
        return NULL;
    }
    v1_chip *result = calloc(1, sizeof *result);
    if (!result) {
        g.chip_close(chip);
        *error = ENOMEM;
        return NULL;
    }
    result->chip = chip;
    result->watch_fd = -1;
    return (hg_chip *)(void *)result;
}

static void chip_close(hg_chip *chip) {
    if (CHIP(chip)->watch_fd >= 0) close(CHIP(chip)->watch_fd);
    g.chip_close(CHIP(chip)->chip);
    free(chip);
}

static const char *chip_name(hg_chip *chip) { return g.chip_name(CHIP(chip)->chip); }
static const char *chip_label(hg_chip *chip) { return g.chip_label(CHIP(chip)->chip); }
static unsigned int chip_num_lines(hg_chip *chip) { return g.chip_num_lines(CHIP(chip)->chip); }

static int chip_find_line(hg_chip *chip, const char *name) {
    errno = 0;
    struct gpiod_line *line = g.chip_find_line(CHIP(chip)->chip, name);
    if (!line) return errno > 0 ? -errno : -ENOENT;
    return (int)g.line_offset(line);
}

static int chip_line_consumer(hg_chip *chip, unsigned int offset, char *buffer, size_t size) {
    if (size > 0) buffer[0] = 0;
    errno = 0;
    struct gpiod_line *line = g.chip_get_line(CHIP(chip)->chip, offset);
    if (!line) return -hg_saved_errno();
    if (g.line_update(line) < 0) return -hg_saved_errno();
    const char *consumer = g.line_consumer(line);
    if (consumer && size > 0) snprintf(buffer, size, "%s", consumer);
    return g.line_is_used(line) ? 1 : 0;
}

static int chip_watch_line(hg_chip *chip, unsigned int offset) {
    v1_chip *c = CHIP(chip);
    if (c->watch_fd < 0) {
        char path[80];
        snprintf(path, sizeof path, "/dev/%s", g.chip_name(c->chip));
        c->watch_fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (c->watch_fd < 0) return -hg_saved_errno();
    }
    struct gpioline_info info = {.line_offset = offset};
    return ioctl(c->watch_fd, GPIO_GET_LINEINFO_WATCH_IOCTL, &info) < 0 ? -hg_saved_errno() : 0;
}

static int chip_info_fd(hg_chip *chip) { return CHIP(chip)->watch_fd; }

static int chip_read_info_event(hg_chip *chip, hg_info_event *event) {
    int fd = CHIP(chip)->watch_fd;
    if (fd < 0) return 0;
    struct gpioline_info_changed changed;
    ssize_t n = read(fd, &changed, sizeof changed);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -hg_saved_errno();
    if (n != (ssize_t)sizeof changed) return -EIO;
    memset(event, 0, sizeof *event);
    event->offset = changed.info.line_offset;
    event->timestamp_ns = changed.timestamp;
    event->type = changed.event_type == GPIOLINE_CHANGED_REQUESTED  ? HG_INFO_REQUESTED
                  : changed.event_type == GPIOLINE_CHANGED_RELEASED ? HG_INFO_RELEASED
                                                                     : HG_INFO_RECONFIGURED;
    snprintf(event->consumer, sizeof event->consumer, "%.*s", (int)sizeof changed.info.consumer, changed.info.consumer);
    return 1;
}

// The watches live on a descriptor of their own: closing it ends them (the kernel's unwatch
// ioctl fails on a removed chip).
static void chip_unwatch(hg_chip *chip) {
    if (CHIP(chip)->watch_fd >= 0) close(CHIP(chip)->watch_fd);
    CHIP(chip)->watch_fd = -1;
}

static int bias_flags(int bias) {
    switch (bias) {
    case HG_BIAS_DISABLED: return V1_FLAG_BIAS_DISABLE;
    case HG_BIAS_PULL_UP: return V1_FLAG_BIAS_PULL_UP;
    case HG_BIAS_PULL_DOWN: return V1_FLAG_BIAS_PULL_DOWN;
    default: return 0;
    }
}

static hg_line *wrap(struct gpiod_line *line, int is_input, int *error) {
    v1_line *result = calloc(1, sizeof *result);
    if (!result) {
        g.line_release(line);
        *error = ENOMEM;
        return NULL;
    }
    result->line = line;
    result->is_input = is_input;
    return (hg_line *)(void *)result;
}

static hg_line *request(hg_chip *chip, unsigned int offset, struct gpiod_line_request_config config, int value,
                        int *error) {
    errno = 0;
    struct gpiod_line *line = g.chip_get_line(CHIP(chip)->chip, offset);
    if (!line) {
        *error = hg_saved_errno();
        return NULL;
    }
    if (g.line_request(line, &config, value) < 0) {
        *error = hg_saved_errno();
        return NULL;
    }
    return wrap(line, config.request_type == V1_REQUEST_EVENT_BOTH_EDGES, error);
}

static hg_line *request_input(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int bias,
                              unsigned int debounce_us, int *error) {
    (void)debounce_us;  // the v1 API has no debounce: the plugin debounces in software
    struct gpiod_line_request_config config = {
        .consumer = consumer,
        .request_type = V1_REQUEST_EVENT_BOTH_EDGES,
        .flags = (active_low ? V1_FLAG_ACTIVE_LOW : 0) | bias_flags(bias),
    };
    hg_line *line = request(chip, offset, config, 0, error);
    if (line) hg_set_nonblocking(g.line_event_get_fd(LINE(line)->line));
    return line;
}

static hg_line *request_output(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int value,
                               int *error) {
    struct gpiod_line_request_config config = {
        .consumer = consumer,
        .request_type = V1_REQUEST_DIRECTION_OUTPUT,
        .flags = active_low ? V1_FLAG_ACTIVE_LOW : 0,
    };
    return request(chip, offset, config, value ? 1 : 0, error);
}

static int get_value(hg_line *line) {
    errno = 0;
    int value = g.line_get_value(LINE(line)->line);
    return value < 0 ? -hg_saved_errno() : value;
}

static int set_value(hg_line *line, int value) {
    errno = 0;
    return g.line_set_value(LINE(line)->line, value ? 1 : 0) < 0 ? -hg_saved_errno() : 0;
}

static int event_fd(hg_line *line) { return LINE(line)->is_input ? g.line_event_get_fd(LINE(line)->line) : -1; }

static int read_events(hg_line *line, hg_event *events, unsigned int max) {
    if (!LINE(line)->is_input || max == 0) return 0;
    int fd = g.line_event_get_fd(LINE(line)->line);
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLPRI};
    int ready = poll(&p, 1, 0);
    if (ready <= 0) return 0;
    if (!(p.revents & (POLLIN | POLLPRI))) return -ENODEV;  // POLLHUP/POLLERR alone: the chip is gone
    struct gpiod_line_event buffer[16];
    if (max > 16) max = 16;
    errno = 0;
    int n = g.line_event_read_fd_multiple(fd, buffer, max);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -hg_saved_errno();
    for (int i = 0; i < n; i++) {
        events[i].timestamp_ns = (uint64_t)buffer[i].ts.tv_sec * 1000000000ull + (uint64_t)buffer[i].ts.tv_nsec;
        events[i].rising = buffer[i].event_type == V1_EVENT_RISING_EDGE;
    }
    return n;
}

static void release(hg_line *line) {
    g.line_release(LINE(line)->line);
    free(line);
}

static const hg_ops v1_ops = {
    .api = 1,
    .kernel_debounce = 0,
    .version = version,
    .chip_open = chip_open,
    .chip_close = chip_close,
    .chip_name = chip_name,
    .chip_label = chip_label,
    .chip_num_lines = chip_num_lines,
    .chip_find_line = chip_find_line,
    .chip_line_consumer = chip_line_consumer,
    .chip_watch_line = chip_watch_line,
    .chip_info_fd = chip_info_fd,
    .chip_read_info_event = chip_read_info_event,
    .chip_unwatch = chip_unwatch,
    .request_input = request_input,
    .request_output = request_output,
    .get_value = get_value,
    .set_value = set_value,
    .event_fd = event_fd,
    .read_events = read_events,
    .release = release,
};

#define BIND(field, symbol)                               \
    do {                                                    \
        *(void **)(&g.field) = dlsym(library, symbol);      \
        if (!g.field) {                                     \
            *missing = symbol;                              \
            return NULL;                                    \
        }                                                   \
    } while (0)

const hg_ops *hg_v1_bind(void *library, const char **missing) {
    BIND(version_string, "gpiod_version_string");
    BIND(chip_open, "gpiod_chip_open");
    BIND(chip_close, "gpiod_chip_close");
    BIND(chip_name, "gpiod_chip_name");
    BIND(chip_label, "gpiod_chip_label");
    BIND(chip_num_lines, "gpiod_chip_num_lines");
    BIND(chip_find_line, "gpiod_chip_find_line");
    BIND(chip_get_line, "gpiod_chip_get_line");
    BIND(line_offset, "gpiod_line_offset");
    BIND(line_update, "gpiod_line_update");
    BIND(line_consumer, "gpiod_line_consumer");
    BIND(line_is_used, "gpiod_line_is_used");
    BIND(line_request, "gpiod_line_request");
    BIND(line_event_get_fd, "gpiod_line_event_get_fd");
    BIND(line_get_value, "gpiod_line_get_value");
    BIND(line_set_value, "gpiod_line_set_value");
    BIND(line_event_read_fd_multiple, "gpiod_line_event_read_fd_multiple");
    BIND(line_release, "gpiod_line_release");
    return &v1_ops;
}
