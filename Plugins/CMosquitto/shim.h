// libmosquitto (Debian's libmosquitto-dev): the C client library the MQTT plugin is built on.
#include <mosquitto.h>
