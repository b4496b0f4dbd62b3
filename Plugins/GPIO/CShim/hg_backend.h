// Inside the shim: what a libgpiod backend provides to the dispatcher (hearth_gpio.c).
#ifndef HG_BACKEND_H
#define HG_BACKEND_H

#include "hearth_gpio.h"

typedef struct hg_ops {
    int api;                 // 1 or 2
    int kernel_debounce;     // whether inputs can be debounced by the kernel
    const char *(*version)(void);
    hg_chip *(*chip_open)(const char *path, int *error);  // a /dev path only
    void (*chip_close)(hg_chip *chip);
    const char *(*chip_name)(hg_chip *chip);
    const char *(*chip_label)(hg_chip *chip);
    unsigned int (*chip_num_lines)(hg_chip *chip);
    int (*chip_find_line)(hg_chip *chip, const char *name);
    int (*chip_line_consumer)(hg_chip *chip, unsigned int offset, char *buffer, size_t size);
    int (*chip_watch_line)(hg_chip *chip, unsigned int offset);
    int (*chip_info_fd)(hg_chip *chip);
    int (*chip_read_info_event)(hg_chip *chip, hg_info_event *event);
    void (*chip_unwatch)(hg_chip *chip);
    hg_line *(*request_input)(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int bias,
                              unsigned int debounce_us, int *error);
    hg_line *(*request_output)(hg_chip *chip, unsigned int offset, const char *consumer, int active_low, int value,
                               int *error);
    int (*get_value)(hg_line *line);
    int (*set_value)(hg_line *line, int value);
    int (*event_fd)(hg_line *line);
    int (*read_events)(hg_line *line, hg_event *events, unsigned int max);
    void (*release)(hg_line *line);
} hg_ops;

/// Resolves the backend's functions in an opened library; NULL (and *missing names the first
/// absent symbol) when the library lacks them.
const hg_ops *hg_v1_bind(void *library, const char **missing);
const hg_ops *hg_v2_bind(void *library, const char **missing);

/// errno, or EIO when a failing call left none.
int hg_saved_errno(void);

/// Makes a file descriptor non-blocking (event reads must never block the poll loop).
void hg_set_nonblocking(int fd);

#endif
