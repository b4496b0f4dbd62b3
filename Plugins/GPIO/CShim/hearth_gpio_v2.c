// libgpiod 2.x (`libgpiod.so.3`: Debian 13, Raspberry Pi OS Trixie) backend of hearth_gpio.h,
// bound at run time with dlsym. The kernel debounces inputs (debounce_period_us), stamps edges
// on CLOCK_MONOTONIC, and reports line requests and releases through the chip's info watch.
#include "hg_backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The libgpiod 2.x declarations this backend uses, written from its documented API (gpiod.h of
// libgpiod 2.x: opaque objects, and enums numbered from 1 except the line value).
struct gpiod_chip;
struct gpiod_chip_info;
struct gpiod_line_info;
struct gpiod_info_event;
struct gpiod_line_settings;
struct gpiod_line_config;
struct gpiod_request_config;
struct gpiod_line_request;
struct gpiod_edge_event;
struct gpiod_edge_event_buffer;

enum {
    V2_VALUE_INACTIVE = 0,
    V2_VALUE_ACTIVE = 1,
    V2_DIRECTION_INPUT = 2,
    V2_DIRECTION_OUTPUT = 3,
    V2_EDGE_BOTH = 4,
    V2_BIAS_AS_IS = 1,
    V2_BIAS_DISABLED = 3,
    V2_BIAS_PULL_UP = 4,
    V2_BIAS_PULL_DOWN = 5,
    V2_CLOCK_MONOTONIC = 1,
    V2_INFO_LINE_REQUESTED = 1,
    V2_INFO_LINE_RELEASED = 2,
    V2_EDGE_EVENT_RISING = 1,
};

static struct {
    const char *(*api_version)(void);
    struct gpiod_chip *(*chip_open)(const char *path);
    void (*chip_close)(struct gpiod_chip *chip);
    struct gpiod_chip_info *(*chip_get_info)(struct gpiod_chip *chip);
    const char *(*chip_info_get_name)(struct gpiod_chip_info *info);
    const char *(*chip_info_get_label)(struct gpiod_chip_info *info);
    size_t (*chip_info_get_num_lines)(struct gpiod_chip_info *info);
    void (*chip_info_free)(struct gpiod_chip_info *info);
    int (*chip_get_line_offset_from_name)(struct gpiod_chip *chip, const char *name);
    struct gpiod_line_info *(*chip_get_line_info)(struct gpiod_chip *chip, unsigned int offset);
    struct gpiod_line_info *(*chip_watch_line_info)(struct gpiod_chip *chip, unsigned int offset);
    int (*chip_get_fd)(struct gpiod_chip *chip);
    struct gpiod_info_event *(*chip_read_info_event)(struct gpiod_chip *chip);
    struct gpiod_line_request *(*chip_request_lines)(struct gpiod_chip *chip, struct gpiod_request_config *req_cfg,
                                                     struct gpiod_line_config *line_cfg);
    void (*line_info_free)(struct gpiod_line_info *info);
    unsigned int (*line_info_get_offset)(struct gpiod_line_info *info);
    bool (*line_info_is_used)(struct gpiod_line_info *info);
    const char *(*line_info_get_consumer)(struct gpiod_line_info *info);
    void (*info_event_free)(struct gpiod_info_event *event);
    int (*info_event_get_event_type)(struct gpiod_info_event *event);
    uint64_t (*info_event_get_timestamp_ns)(struct gpiod_info_event *event);
    struct gpiod_line_info *(*info_event_get_line_info)(struct gpiod_info_event *event);
    struct gpiod_line_settings *(*line_settings_new)(void);
    void (*line_settings_free)(struct gpiod_line_settings *settings);
    int (*line_settings_set_direction)(struct gpiod_line_settings *settings, int direction);
    int (*line_settings_set_edge_detection)(struct gpiod_line_settings *settings, int edge);
    int (*line_settings_set_bias)(struct gpiod_line_settings *settings, int bias);
    void (*line_settings_set_active_low)(struct gpiod_line_settings *settings, bool active_low);
    void (*line_settings_set_debounce_period_us)(struct gpiod_line_settings *settings, unsigned long period);
    int (*line_settings_set_event_clock)(struct gpiod_line_settings *settings, int clock);
    int (*line_settings_set_output_value)(struct gpiod_line_settings *settings, int value);
    struct gpiod_line_config *(*line_config_new)(void);
    void (*line_config_free)(struct gpiod_line_config *config);
    int (*line_config_add_line_settings)(struct gpiod_line_config *config, const unsigned int *offsets,
                                         size_t num_offsets, struct gpiod_line_settings *settings);
    struct gpiod_request_config *(*request_config_new)(void);
    void (*request_config_free)(struct gpiod_request_config *config);
    void (*request_config_set_consumer)(struct gpiod_request_config *config, const char *consumer);
    void (*line_request_release)(struct gpiod_line_request *request);
    int (*line_request_get_value)(struct gpiod_line_request *request, unsigned int offset);
    int (*line_request_set_value)(struct gpiod_line_request *request, unsigned int offset, int value);
    int (*line_request_get_fd)(struct gpiod_line_request *request);
    int (*line_request_read_edge_events)(struct gpiod_line_request *request, struct gpiod_edge_event_buffer *buffer,
                                         size_t max_events);
    struct gpiod_edge_event_buffer *(*edge_event_buffer_new)(size_t capacity);
    void (*edge_event_buffer_free)(struct gpiod_edge_event_buffer *buffer);
    struct gpiod_edge_event *(*edge_event_buffer_get_event)(struct gpiod_edge_event_buffer *buffer, unsigned long index);
    int (*edge_event_get_event_type)(struct gpiod_edge_event *event);
    uint64_t (*edge_event_get_timestamp_ns)(struct gpiod_edge_event *event);
} g;

typedef struct {
    struct gpiod_chip *chip;
    char name[32];
    char label[64];
    unsigned int num_lines;
    int watching;
} v2_chip;

typedef struct {
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;  // inputs only
    unsigned int offset;
} v2_line;

#define CHIP(c) ((v2_chip *)(void *)(c))
#define LINE(l) ((v2_line *)(void *)(l))
#define EVENT_CAPACITY 16

static const char *version(void) { return g.api_version(); }

static hg_chip *chip_open(const char *path, int *error) {
    errno = 0;
    struct gpiod_chip *chip = g.chip_open(path);
    if (!chip) {
        *error = hg_saved_errno();
        return NULL;
    }
    struct gpiod_chip_info *info = g.chip_get_info(chip);
    v2_chip *result = info ? calloc(1, sizeof *result) : NULL;
    if (!result) {
        *error = info ? ENOMEM : hg_saved_errno();
        if (info) g.chip_info_free(info);
        g.chip_close(chip);
        return NULL;
    }
    result->chip = chip;
    snprintf(result->name, sizeof result->name, "%s", g.chip_info_get_name(info));
    snprintf(result->label, sizeof result->label, "%s", g.chip_info_get_label(info));
    result->num_lines = (unsigned int)g.chip_info_get_num_lines(info);
    g.chip_info_free(info);
    // Info events are read without blocking.
    hg_set_nonblocking(g.chip_get_fd(chip));
    return (hg_chip *)(void *)result;
}

static void chip_close(hg_chip *chip) {
    if (CHIP(chip)->chip) g.chip_close(CHIP(chip)->chip);
    free(chip);
}

// libgpiod 2 keeps the watches on the chip's own descriptor (the kernel's unwatch ioctl fails
// on a removed chip): closing the chip ends them. Line requests have descriptors of their own
// and stay valid; the name, label and line count are kept here.
static void chip_unwatch(hg_chip *chip) {
    if (CHIP(chip)->chip) g.chip_close(CHIP(chip)->chip);
    CHIP(chip)->chip = NULL;
    CHIP(chip)->watching = 0;
}

#define NEED_CHIP(c, result)             \
    do {                                 \
        if (!CHIP(c)->chip) return result; \
    } while (0)

static const char *chip_name(hg_chip *chip) { return CHIP(chip)->name; }
static const char *chip_label(hg_chip *chip) { return CHIP(chip)->label; }
static unsigned int chip_num_lines(hg_chip *chip) { return CHIP(chip)->num_lines; }

static int chip_find_line(hg_chip *chip, const char *name) {
    NEED_CHIP(chip, -ENODEV);
    errno = 0;
    int offset = g.chip_get_line_offset_from_name(CHIP(chip)->chip, name);
    if (offset < 0) return errno > 0 ? -errno : -ENOENT;
    return offset;
}

static int chip_line_consumer(hg_chip *chip, unsigned int offset, char *buffer, size_t size) {
    if (size > 0) buffer[0] = 0;
    NEED_CHIP(chip, -ENODEV);
    errno = 0;
    struct gpiod_line_info *info = g.chip_get_line_info(CHIP(chip)->chip, offset);
    if (!info) return -hg_saved_errno();
    const char *consumer = g.line_info_get_consumer(info);
    if (consumer && size > 0) snprintf(buffer, size, "%s", consumer);
    int used = g.line_info_is_used(info) ? 1 : 0;
    g.line_info_free(info);
    return used;
}

static int chip_watch_line(hg_chip *chip, unsigned int offset) {
    NEED_CHIP(chip, -ENODEV);
    errno = 0;
    struct gpiod_line_info *info = g.chip_watch_line_info(CHIP(chip)->chip, offset);
    if (!info) return errno == EBUSY ? 0 : -hg_saved_errno();  // EBUSY: already watched
    g.line_info_free(info);
    CHIP(chip)->watching = 1;
    return 0;
}

static int chip_info_fd(hg_chip *chip) { return CHIP(chip)->watching && CHIP(chip)->chip ? g.chip_get_fd(CHIP(chip)->chip) : -1; }

static int chip_read_info_event(hg_chip *chip, hg_info_event *event) {
    NEED_CHIP(chip, -ENODEV);
    int fd = g.chip_get_fd(CHIP(chip)->chip);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0) return 0;
    if (!(p.revents & POLLIN)) return -ENODEV;
    errno = 0;
    struct gpiod_info_event *e = g.chip_read_info_event(CHIP(chip)->chip);
    if (!e) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -hg_saved_errno();
    memset(event, 0, sizeof *event);
    struct gpiod_line_info *info = g.info_event_get_line_info(e);
    int type = g.info_event_get_event_type(e);
    event->type = type == V2_INFO_LINE_REQUESTED ? HG_INFO_REQUESTED
                  : type == V2_INFO_LINE_RELEASED ? HG_INFO_RELEASED
                                                   : HG_INFO_RECONFIGURED;
    event->timestamp_ns = g.info_event_get_timestamp_ns(e);
    event->offset = g.line_info_get_offset(info);
    const char *consumer = g.line_info_get_consumer(info);
    if (consumer) snprintf(event->consumer, sizeof event->consumer, "%s", consumer);
    g.info_event_free(e);
    return 1;
}

static int bias_value(int bias) {
    switch (bias) {
    case HG_BIAS_DISABLED: return V2_BIAS_DISABLED;
    case HG_BIAS_PULL_UP: return V2_BIAS_PULL_UP;
    case HG_BIAS_PULL_DOWN: return V2_BIAS_PULL_DOWN;
    default: return V2_BIAS_AS_IS;
    }
}

/// Requests one line with `settings` (consumed), as an input (with an event buffer) or not.
static hg_line *request(hg_chip *chip, unsigned int offset, const char *consumer, struct gpiod_line_settings *settings,
                        int is_input, int *error) {
    if (!CHIP(chip)->chip) {
        g.line_settings_free(settings);
        *error = ENODEV;
        return NULL;
    }
    struct gpiod_line_config *line_config = g.line_config_new();
    struct gpiod_request_config *request_config = g.request_config_new();
    v2_line *result = calloc(1, sizeof *result);
    struct gpiod_line_request *req = NULL;
    errno = 0;
    if (line_config && request_config && result &&
        g.line_config_add_line_settings(line_config, &offset, 1, settings) == 0) {
        g.request_config_set_consumer(request_config, consumer);
        req = g.chip_request_lines(CHIP(chip)->chip, request_config, line_config);
    }
    int failure = req ? 0 : (result ? hg_saved_errno() : ENOMEM);
    if (line_config) g.line_config_free(line_config);
    if (request_config) g.request_config_free(request_config);
    g.line_settings_free(settings);
    if (req && is_input && !(result->buffer = g.edge_event_buffer_new(EVENT_CAPACITY))) failure = ENOMEM;
    if (failure) {
        if (req) g.line_request_release(req);
        free(result);
        *error = failure;
        return NULL;
    }
    result->request = req;
    result->offset = offset;
    if (is_input) hg_set_nonblocking(g.line_request_get_fd(req));
    return (hg_line *)(void *)result;
}

static hg_line *request_input(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int bias,
                              unsigned int debounce_us, int *error) {
    struct gpiod_line_settings *settings = g.line_settings_new();
    if (!settings) {
        *error = ENOMEM;
        return NULL;
    }
    g.line_settings_set_direction(settings, V2_DIRECTION_INPUT);
    g.line_settings_set_edge_detection(settings, V2_EDGE_BOTH);
    g.line_settings_set_bias(settings, bias_value(bias));
    g.line_settings_set_active_low(settings, active_low != 0);
    g.line_settings_set_event_clock(settings, V2_CLOCK_MONOTONIC);
    if (debounce_us > 0) g.line_settings_set_debounce_period_us(settings, debounce_us);
    return request(chip, offset, consumer, settings, 1, error);
}

static hg_line *request_output(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int value,
                               int *error) {
    struct gpiod_line_settings *settings = g.line_settings_new();
    if (!settings) {
        *error = ENOMEM;
        return NULL;
    }
    g.line_settings_set_direction(settings, V2_DIRECTION_OUTPUT);
    g.line_settings_set_active_low(settings, active_low != 0);
    g.line_settings_set_output_value(settings, value ? V2_VALUE_ACTIVE : V2_VALUE_INACTIVE);
    return request(chip, offset, consumer, settings, 0, error);
}

static int get_value(hg_line *line) {
    errno = 0;
    int value = g.line_request_get_value(LINE(line)->request, LINE(line)->offset);
    return value < 0 ? -hg_saved_errno() : value == V2_VALUE_ACTIVE;
}

static int set_value(hg_line *line, int value) {
    errno = 0;
    int r = g.line_request_set_value(LINE(line)->request, LINE(line)->offset, value ? V2_VALUE_ACTIVE : V2_VALUE_INACTIVE);
    return r < 0 ? -hg_saved_errno() : 0;
}

static int event_fd(hg_line *line) { return LINE(line)->buffer ? g.line_request_get_fd(LINE(line)->request) : -1; }

static int read_events(hg_line *line, hg_event *events, unsigned int max) {
    v2_line *l = LINE(line);
    if (!l->buffer || max == 0) return 0;
    struct pollfd p = {.fd = g.line_request_get_fd(l->request), .events = POLLIN};
    if (poll(&p, 1, 0) <= 0) return 0;
    if (!(p.revents & POLLIN)) return -ENODEV;  // POLLHUP/POLLERR alone: the chip is gone
    if (max > EVENT_CAPACITY) max = EVENT_CAPACITY;
    errno = 0;
    int n = g.line_request_read_edge_events(l->request, l->buffer, max);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -hg_saved_errno();
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *e = g.edge_event_buffer_get_event(l->buffer, (unsigned long)i);
        events[i].timestamp_ns = g.edge_event_get_timestamp_ns(e);
        events[i].rising = g.edge_event_get_event_type(e) == V2_EDGE_EVENT_RISING;
    }
    return n;
}

static void release(hg_line *line) {
    v2_line *l = LINE(line);
    g.line_request_release(l->request);
    if (l->buffer) g.edge_event_buffer_free(l->buffer);
    free(l);
}

static const hg_ops v2_ops = {
    .api = 2,
    .kernel_debounce = 1,
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

#define BIND(field)                                              \
    do {                                                         \
        *(void **)(&g.field) = dlsym(library, "gpiod_" #field);  \
        if (!g.field) {                                          \
            *missing = "gpiod_" #field;                          \
            return NULL;                                         \
        }                                                        \
    } while (0)

const hg_ops *hg_v2_bind(void *library, const char **missing) {
    BIND(api_version);
    BIND(chip_open);
    BIND(chip_close);
    BIND(chip_get_info);
    BIND(chip_info_get_name);
    BIND(chip_info_get_label);
    BIND(chip_info_get_num_lines);
    BIND(chip_info_free);
    BIND(chip_get_line_offset_from_name);
    BIND(chip_get_line_info);
    BIND(chip_watch_line_info);
    BIND(chip_get_fd);
    BIND(chip_read_info_event);
    BIND(chip_request_lines);
    BIND(line_info_free);
    BIND(line_info_get_offset);
    BIND(line_info_is_used);
    BIND(line_info_get_consumer);
    BIND(info_event_free);
    BIND(info_event_get_event_type);
    BIND(info_event_get_timestamp_ns);
    BIND(info_event_get_line_info);
    BIND(line_settings_new);
    BIND(line_settings_free);
    BIND(line_settings_set_direction);
    BIND(line_settings_set_edge_detection);
    BIND(line_settings_set_bias);
    BIND(line_settings_set_active_low);
    BIND(line_settings_set_debounce_period_us);
    BIND(line_settings_set_event_clock);
    BIND(line_settings_set_output_value);
    BIND(line_config_new);
    BIND(line_config_free);
    BIND(line_config_add_line_settings);
    BIND(request_config_new);
    BIND(request_config_free);
    BIND(request_config_set_consumer);
    BIND(line_request_release);
    BIND(line_request_get_value);
    BIND(line_request_set_value);
    BIND(line_request_get_fd);
    BIND(line_request_read_edge_events);
    BIND(edge_event_buffer_new);
    BIND(edge_event_buffer_free);
    BIND(edge_event_buffer_get_event);
    BIND(edge_event_get_event_type);
    BIND(edge_event_get_timestamp_ns);
    return &v2_ops;
}
