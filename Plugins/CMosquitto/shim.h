// libmosquitto (Debian's libmosquitto-dev): the C client library the MQTT plugin is built on.
#include <mosquitto.h>
// eventfd: wakes the plugin's network loop when another thread queues a packet.
#include <sys/eventfd.h>
