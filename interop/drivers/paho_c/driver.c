/* The driver of Eclipse Paho C (libpaho-mqtt3a, the MQTTAsync API) for `pubproof
 * probe-client`: the driver protocol (pubproof.probe.clients.driver) in one small C program.
 *
 * It reads the plan from PUBPROOF_PLAN, creates one MQTTAsync client (MQTT 3.1, 3.1.1 or
 * 5.0 as the plan's edition says), connects, and once connected the first time subscribes
 * to each filter and hands every message of the plan to MQTTAsync_sendMessage, in order,
 * from the library's `connected` callback. When the library reports the connection lost it
 * calls MQTTAsync_reconnect at once, as an application would (the library's own automatic
 * reconnect checks its timer every 3 s and comes back 3 to 4 s after the loss, too near
 * the 5 s pubproof waits for it). It prints one JSON line per event on standard output,
 * until standard input closes; then it disconnects and exits 0.
 *
 * What it leaves to the library, as the protocol asks: it resolves no incoming Topic Alias
 * (a message is printed on the topic name the library hands over, empty or not), and it
 * keeps none of the server's CONNACK limits (Receive Maximum, Maximum Packet Size, Topic
 * Alias Maximum, Maximum QoS, Retain Available): a message the library refuses is
 * `publish-refused`, one it sends is judged on the wire. MQTT 5.0: the client's limits and
 * Session Expiry Interval go in CONNECT, Clean Start as the plan says on every connection,
 * each message's properties both ways (a Topic Alias the plan asks for goes to the
 * library; one that comes in is not printed: it is the library's business).
 *
 * Lines beside the protocol's (kept as evidence, judged as nothing): `connection-error`
 * (the first connection attempt failed), `publish-failed` (the library reported a message
 * it had taken as failed: an error PUBACK or PUBREC in 5.0, or one dropped with its
 * session), with the library's code and, in 5.0, the Reason Code.
 */
#include <MQTTAsync.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

#define LIBRARY "paho-c (libpaho-mqtt3a, MQTTAsync)"
/* how long the final disconnect may take before the client is destroyed anyway, ms */
#define DISCONNECT_MS 1000

static pthread_mutex_t say_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	MQTTAsync client;
	const json_value *plan;
	int v5;
	int connected_before;     /* a CONNACK came before: subscribe and publish only once */
	volatile int disconnected; /* the final disconnect completed (or failed) */
} app;

/* -- the protocol's lines --------------------------------------------------------------- */

static json_out line_of(const char *event)
{
	json_out line = {0};
	json_raw(&line, "{\"event\": ");
	json_string(&line, event, strlen(event));
	return line;
}

static void key(json_out *line, const char *name)
{
	json_raw(line, ", ");
	json_string(line, name, strlen(name));
	json_raw(line, ": ");
}

static void text_field(json_out *line, const char *name, const char *text)
{
	key(line, name);
	json_string(line, text, strlen(text));
}

static void long_field(json_out *line, const char *name, long number)
{
	key(line, name);
	json_long(line, number);
}

/* Close the line and print it, flushed (the library's threads print too). */
static void say(json_out *line)
{
	json_raw(line, "}\n");
	pthread_mutex_lock(&say_lock);
	fwrite(line->data, 1, line->length, stdout);
	fflush(stdout);
	pthread_mutex_unlock(&say_lock);
	json_free(line);
}

static void say_message(const char *event, const char *message)
{
	json_out line = line_of(event);
	text_field(&line, "message", message);
	say(&line);
}

/* -- the plan ----------------------------------------------------------------------------- */

static const char *plan_text(const json_value *object, const char *name)
{
	const json_value *v = json_get(object, name);
	return v != NULL && v->type == JSON_STRING ? v->string : "";
}

static size_t plan_count(const char *name)
{
	const json_value *v = json_get(app.plan, name);
	return v != NULL && v->type == JSON_ARRAY ? v->count : 0;
}

static const json_value *plan_item(const char *name, size_t index)
{
	return &json_get(app.plan, name)->items[index];
}

/* The bytes of a hex string (malloc'd; its length in *length). */
static unsigned char *from_hex(const char *hex, int *length)
{
	size_t n = strlen(hex) / 2;
	unsigned char *bytes = malloc(n + 1);
	if (bytes == NULL)
		abort();
	for (size_t i = 0; i < n; i++) {
		unsigned int byte = 0;
		sscanf(hex + 2 * i, "%2x", &byte);
		bytes[i] = (unsigned char)byte;
	}
	*length = (int)n;
	return bytes;
}

static void add_number(MQTTProperties *properties, enum MQTTPropertyCodes code, long value)
{
	MQTTProperty p;
	memset(&p, 0, sizeof p);
	p.identifier = code;
	switch (MQTTProperty_getType(code)) {
	case MQTTPROPERTY_TYPE_BYTE: p.value.byte = (unsigned char)value; break;
	case MQTTPROPERTY_TYPE_TWO_BYTE_INTEGER: p.value.integer2 = (unsigned short)value; break;
	default: p.value.integer4 = (unsigned int)value; break;
	}
	MQTTProperties_add(properties, &p); /* it copies */
}

static void add_bytes(MQTTProperties *properties, enum MQTTPropertyCodes code,
                      const char *data, int length, const char *value, int value_length)
{
	MQTTProperty p;
	memset(&p, 0, sizeof p);
	p.identifier = code;
	p.value.data.data = (char *)data;
	p.value.data.len = length;
	p.value.value.data = (char *)value;
	p.value.value.len = value_length;
	MQTTProperties_add(properties, &p); /* it copies the bytes */
}

/* A message's properties as the plan gives them (the form of `pubproof decode`'s P), for the
 * library: every one the application asks for, the Topic Alias too (whether it may go is
 * the library's to decide). */
static void publish_properties(const json_value *given, MQTTProperties *out)
{
	static const struct { const char *name; enum MQTTPropertyCodes code; } numbers[] = {
		{"payload_format_indicator", MQTTPROPERTY_CODE_PAYLOAD_FORMAT_INDICATOR},
		{"message_expiry_interval", MQTTPROPERTY_CODE_MESSAGE_EXPIRY_INTERVAL},
		{"topic_alias", MQTTPROPERTY_CODE_TOPIC_ALIAS},
	}, texts[] = {
		{"response_topic", MQTTPROPERTY_CODE_RESPONSE_TOPIC},
		{"content_type", MQTTPROPERTY_CODE_CONTENT_TYPE},
	};
	for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++) {
		const json_value *v = json_get(given, numbers[i].name);
		if (v != NULL)
			add_number(out, numbers[i].code, json_int(v, 0));
	}
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		const json_value *v = json_get(given, texts[i].name);
		if (v != NULL && v->type == JSON_STRING)
			add_bytes(out, texts[i].code, v->string, (int)v->length, NULL, 0);
	}
	const json_value *correlation = json_get(given, "correlation_data_hex");
	if (correlation != NULL && correlation->type == JSON_STRING) {
		int length;
		unsigned char *data = from_hex(correlation->string, &length);
		add_bytes(out, MQTTPROPERTY_CODE_CORRELATION_DATA, (char *)data, length, NULL, 0);
		free(data);
	}
	const json_value *users = json_get(given, "user_properties");
	for (size_t i = 0; users != NULL && users->type == JSON_ARRAY && i < users->count; i++) {
		const json_value *pair = &users->items[i];
		if (pair->type != JSON_ARRAY || pair->count != 2)
			continue;
		const json_value *name = &pair->items[0], *value = &pair->items[1];
		if (name->type != JSON_STRING || value->type != JSON_STRING)
			continue;
		add_bytes(out, MQTTPROPERTY_CODE_USER_PROPERTY, name->string, (int)name->length,
		          value->string, (int)value->length);
	}
}

/* -- what the library reports -------------------------------------------------------------- */

/* A received message's properties in the P form; the Topic Alias left out (the library's
 * business: pubproof judges the topic name it handed over). */
static void received_properties(json_out *line, const MQTTProperties *properties)
{
	json_out users = {0}, identifiers = {0};
	key(line, "properties");
	json_raw(line, "{");
	const char *comma = "";
	for (int i = 0; i < properties->count; i++) {
		const MQTTProperty *p = &properties->array[i];
		const MQTTLenString *data = &p->value.data;
		json_out *list = NULL;
		const char *name = NULL;
		switch (p->identifier) {
		case MQTTPROPERTY_CODE_PAYLOAD_FORMAT_INDICATOR: name = "payload_format_indicator"; break;
		case MQTTPROPERTY_CODE_MESSAGE_EXPIRY_INTERVAL: name = "message_expiry_interval"; break;
		case MQTTPROPERTY_CODE_CONTENT_TYPE: name = "content_type"; break;
		case MQTTPROPERTY_CODE_RESPONSE_TOPIC: name = "response_topic"; break;
		case MQTTPROPERTY_CODE_CORRELATION_DATA: name = "correlation_data_hex"; break;
		case MQTTPROPERTY_CODE_USER_PROPERTY: list = &users; break;
		case MQTTPROPERTY_CODE_SUBSCRIPTION_IDENTIFIER: list = &identifiers; break;
		default: continue; /* the Topic Alias, and nothing else a PUBLISH carries */
		}
		if (list != NULL) {
			json_raw(list, list->length ? ", " : "[");
			if (list == &users) {
				json_raw(list, "[");
				json_string(list, data->data, (size_t)data->len);
				json_raw(list, ", ");
				json_string(list, p->value.value.data, (size_t)p->value.value.len);
				json_raw(list, "]");
			} else {
				json_long(list, (long)p->value.integer4);
			}
			continue;
		}
		json_raw(line, comma);
		comma = ", ";
		json_string(line, name, strlen(name));
		json_raw(line, ": ");
		if (p->identifier == MQTTPROPERTY_CODE_PAYLOAD_FORMAT_INDICATOR)
			json_long(line, p->value.byte);
		else if (p->identifier == MQTTPROPERTY_CODE_MESSAGE_EXPIRY_INTERVAL)
			json_long(line, (long)p->value.integer4);
		else if (p->identifier == MQTTPROPERTY_CODE_CORRELATION_DATA)
			json_hex(line, (const unsigned char *)data->data, (size_t)data->len);
		else
			json_string(line, data->data, (size_t)data->len);
	}
	json_out *lists[] = {&users, &identifiers};
	const char *names[] = {"user_properties", "subscription_identifiers"};
	for (int i = 0; i < 2; i++) {
		if (lists[i]->length == 0)
			continue;
		json_raw(lists[i], "]");
		json_raw(line, comma);
		comma = ", ";
		json_string(line, names[i], strlen(names[i]));
		json_raw(line, ": ");
		json_raw(line, lists[i]->data);
		json_free(lists[i]);
	}
	json_raw(line, "}");
}

static int on_message(void *context, char *topic, int topic_length, MQTTAsync_message *m)
{
	(void)context;
	/* topic_length is 0 unless the topic name holds a NUL byte */
	size_t length = topic_length > 0 ? (size_t)topic_length : strlen(topic);
	json_out line = line_of("message");
	key(&line, "topic");
	json_string(&line, topic, length);
	long_field(&line, "qos", m->qos);
	key(&line, "retain");
	json_raw(&line, m->retained ? "true" : "false");
	key(&line, "payload_hex");
	json_hex(&line, (const unsigned char *)m->payload, (size_t)m->payloadlen);
	if (app.v5)
		received_properties(&line, &m->properties);
	say(&line);
	MQTTAsync_freeMessage(&m);
	MQTTAsync_free(topic);
	return 1; /* handed to the application: the library may acknowledge it */
}

static void on_connection_lost(void *context, char *cause)
{
	(void)context;
	json_out line = line_of("connection-lost");
	if (cause != NULL)
		text_field(&line, "message", cause);
	say(&line);
	/* as an application would, at once (the library sends the CONNECT about a second
	 * later: it looks at a connecting socket once a second) */
	if (json_truthy(json_get(app.plan, "reconnect")))
		MQTTAsync_reconnect(app.client);
}

static void on_subscribed(void *context, MQTTAsync_successData *response)
{
	(void)context, (void)response;
	json_out line = line_of("subscribed");
	say(&line);
}

static void on_subscribed5(void *context, MQTTAsync_successData5 *response)
{
	on_subscribed(context, NULL);
	(void)response;
}

static void failed(const char *event, void *context, int code, const char *message, long reason)
{
	json_out line = line_of(event);
	if (strcmp(event, "publish-failed") == 0)
		long_field(&line, "index", (long)(uintptr_t)context);
	long_field(&line, "code", code);
	if (reason >= 0)
		long_field(&line, "reason_code", reason);
	text_field(&line, "message", message != NULL ? message : MQTTAsync_strerror(code));
	say(&line);
}

static void on_subscribe_failed(void *context, MQTTAsync_failureData *response)
{
	failed("error", context, response->code, response->message, -1);
}

static void on_subscribe_failed5(void *context, MQTTAsync_failureData5 *response)
{
	failed("error", context, response->code, response->message, response->reasonCode);
}

static void on_publish_failed(void *context, MQTTAsync_failureData *response)
{
	failed("publish-failed", context, response->code, response->message, -1);
}

static void on_publish_failed5(void *context, MQTTAsync_failureData5 *response)
{
	failed("publish-failed", context, response->code, response->message, response->reasonCode);
}

/* The first connection's answer: the `connected` callback says it; the library forgets its
 * connect callbacks once one has run, so that a later failure is not called a failed first
 * connection. */
static void on_first_connect(void *context, MQTTAsync_successData *response)
{
	(void)context, (void)response;
}

static void on_first_connect5(void *context, MQTTAsync_successData5 *response)
{
	(void)context, (void)response;
}

static void on_connect_failed(void *context, MQTTAsync_failureData *response)
{
	failed("connection-error", context, response->code, response->message, -1);
}

static void on_connect_failed5(void *context, MQTTAsync_failureData5 *response)
{
	failed("connection-error", context, response->code, response->message, response->reasonCode);
}

static void on_disconnected(void *context, MQTTAsync_successData *response)
{
	(void)context, (void)response;
	app.disconnected = 1;
}

static void on_disconnected5(void *context, MQTTAsync_successData5 *response)
{
	(void)context, (void)response;
	app.disconnected = 1;
}

static void on_disconnect_failed(void *context, MQTTAsync_failureData *response)
{
	(void)context, (void)response;
	app.disconnected = 1;
}

static void on_disconnect_failed5(void *context, MQTTAsync_failureData5 *response)
{
	(void)context, (void)response;
	app.disconnected = 1;
}

/* -- the application ----------------------------------------------------------------------- */

/* Response options of the edition: MQTTAsync takes the 5.0 callbacks only from a 5.0
 * client, the others only from a 3.x one. */
static MQTTAsync_responseOptions respond(void *context, MQTTAsync_onSuccess *ok, MQTTAsync_onSuccess5 *ok5,
                                         MQTTAsync_onFailure *bad, MQTTAsync_onFailure5 *bad5)
{
	MQTTAsync_responseOptions options = MQTTAsync_responseOptions_initializer;
	options.context = context;
	if (app.v5)
		options.onSuccess5 = ok5, options.onFailure5 = bad5;
	else
		options.onSuccess = ok, options.onFailure = bad;
	return options;
}

static void publish(size_t index)
{
	const json_value *m = plan_item("publish", index);
	MQTTAsync_message message = MQTTAsync_message_initializer;
	unsigned char *payload = from_hex(plan_text(m, "payload_hex"), &message.payloadlen);
	message.payload = payload;
	message.qos = (int)json_int(json_get(m, "qos"), 0);
	message.retained = json_truthy(json_get(m, "retain"));
	if (app.v5)
		publish_properties(json_get(m, "properties"), &message.properties);
	MQTTAsync_responseOptions options =
		respond((void *)(uintptr_t)index, NULL, NULL, on_publish_failed, on_publish_failed5);
	int rc = MQTTAsync_sendMessage(app.client, plan_text(m, "topic"), &message, &options);
	if (rc != MQTTASYNC_SUCCESS) {
		/* the library would not take the message: evidence, neither a crash nor a failure */
		json_out line = line_of("publish-refused");
		long_field(&line, "index", (long)index);
		long_field(&line, "code", rc);
		text_field(&line, "message", MQTTAsync_strerror(rc));
		say(&line);
	}
	MQTTProperties_free(&message.properties);
	free(payload);
}

/* Each CONNACK the library accepts (the first connection and every automatic reconnect). */
static void on_connected(void *context, char *cause)
{
	(void)context, (void)cause;
	json_out line = line_of("connected");
	say(&line);
	if (app.connected_before)
		return;
	app.connected_before = 1;
	for (size_t i = 0; i < plan_count("subscribe"); i++) {
		const json_value *s = plan_item("subscribe", i);
		MQTTAsync_responseOptions options =
			respond(NULL, on_subscribed, on_subscribed5, on_subscribe_failed, on_subscribe_failed5);
		int rc = MQTTAsync_subscribe(app.client, plan_text(s, "topic"),
		                             (int)json_int(json_get(s, "qos"), 0), &options);
		if (rc != MQTTASYNC_SUCCESS)
			say_message("error", MQTTAsync_strerror(rc));
	}
	for (size_t i = 0; i < plan_count("publish"); i++)
		publish(i);
}

/* The version the library reports at run time (MQTTAsync_getVersionInfo). Debian's
 * 1.3.12-1 reports 1.3.11: the build passes the package's version as PACKAGE_VERSION, the
 * hello line carries both. */
static const char *library_version(void)
{
	for (MQTTAsync_nameValue *info = MQTTAsync_getVersionInfo(); info->name != NULL; info++)
		if (strcmp(info->name, "Version") == 0)
			return info->value;
	return "unknown";
}

/* The client's CONNECT properties (5.0): its Session Expiry Interval and own limits. */
static void connect_properties(MQTTProperties *out)
{
	static const struct { const char *name; enum MQTTPropertyCodes code; } limits[] = {
		{"receive_maximum", MQTTPROPERTY_CODE_RECEIVE_MAXIMUM},
		{"topic_alias_maximum", MQTTPROPERTY_CODE_TOPIC_ALIAS_MAXIMUM},
		{"maximum_packet_size", MQTTPROPERTY_CODE_MAXIMUM_PACKET_SIZE},
	};
	const json_value *expiry = json_get(app.plan, "session_expiry_interval");
	if (expiry != NULL && expiry->type == JSON_NUMBER)
		add_number(out, MQTTPROPERTY_CODE_SESSION_EXPIRY_INTERVAL, json_int(expiry, 0));
	const json_value *given = json_get(app.plan, "limits");
	for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
		const json_value *v = json_get(given, limits[i].name);
		if (v != NULL)
			add_number(out, limits[i].code, json_int(v, 0));
	}
}

static int start(void)
{
	const char *edition = plan_text(app.plan, "edition");
	int version = strcmp(edition, "3.1") == 0 ? MQTTVERSION_3_1
		: strcmp(edition, "3.1.1") == 0 ? MQTTVERSION_3_1_1
		: strcmp(edition, "5.0") == 0 ? MQTTVERSION_5 : -1;
	if (version < 0) {
		say_message("unsupported", "the driver knows MQTT 3.1, 3.1.1 and 5.0 only");
		return 0;
	}
	app.v5 = version == MQTTVERSION_5;
	MQTTAsync_createOptions create = MQTTAsync_createOptions_initializer;
	create.MQTTVersion = version;
	int rc = MQTTAsync_createWithOptions(&app.client, plan_text(app.plan, "url"),
	                                     plan_text(app.plan, "client_id"),
	                                     MQTTCLIENT_PERSISTENCE_NONE, NULL, &create);
	if (rc == MQTTASYNC_SUCCESS)
		rc = MQTTAsync_setCallbacks(app.client, NULL, on_connection_lost, on_message, NULL);
	if (rc == MQTTASYNC_SUCCESS)
		rc = MQTTAsync_setConnected(app.client, NULL, on_connected);
	if (rc != MQTTASYNC_SUCCESS) {
		say_message("error", MQTTAsync_strerror(rc));
		return 1;
	}
	MQTTAsync_connectOptions connect = MQTTAsync_connectOptions_initializer;
	MQTTAsync_connectOptions connect5 = MQTTAsync_connectOptions_initializer5;
	MQTTProperties properties = MQTTProperties_initializer;
	int clean = json_truthy(json_get(app.plan, "clean_session"));
	if (app.v5) {
		connect = connect5;
		connect.cleanstart = clean; /* on every connection, reconnections too */
		connect_properties(&properties);
		connect.connectProperties = &properties;
		connect.onSuccess5 = on_first_connect5;
		connect.onFailure5 = on_connect_failed5;
	} else {
		connect.cleansession = clean;
		connect.onSuccess = on_first_connect;
		connect.onFailure = on_connect_failed;
	}
	connect.MQTTVersion = version;
	connect.keepAliveInterval = (int)json_int(json_get(app.plan, "keepalive"), 60);
	connect.automaticReconnect = 0; /* on_connection_lost reconnects */
	rc = MQTTAsync_connect(app.client, &connect);
	MQTTProperties_free(&properties); /* the library keeps its own copy */
	if (rc != MQTTASYNC_SUCCESS) {
		say_message("error", MQTTAsync_strerror(rc));
		return 1;
	}
	return 0;
}

static void stop(void)
{
	MQTTAsync_disconnectOptions options = MQTTAsync_disconnectOptions_initializer;
	MQTTAsync_disconnectOptions options5 = MQTTAsync_disconnectOptions_initializer5;
	if (app.v5) {
		options = options5;
		options.onSuccess5 = on_disconnected5;
		options.onFailure5 = on_disconnect_failed5;
	} else {
		options.onSuccess = on_disconnected;
		options.onFailure = on_disconnect_failed;
	}
	options.timeout = 0; /* at once: what is in flight stays in flight */
	if (MQTTAsync_disconnect(app.client, &options) == MQTTASYNC_SUCCESS) {
		struct timespec tick = {0, 10 * 1000 * 1000};
		for (int waited = 0; !app.disconnected && waited < DISCONNECT_MS; waited += 10)
			nanosleep(&tick, NULL);
	}
	MQTTAsync_destroy(&app.client);
}

int main(void)
{
	json_out hello = line_of("hello");
	text_field(&hello, "library", LIBRARY);
#ifdef PACKAGE_VERSION
	text_field(&hello, "version", PACKAGE_VERSION); /* the package's: see library_reports */
#else
	text_field(&hello, "version", library_version());
#endif
	text_field(&hello, "library_reports", library_version());
	say(&hello);
	const char *text = getenv("PUBPROOF_PLAN");
	char why[200];
	app.plan = text != NULL ? json_parse(text, why, sizeof why) : NULL;
	if (app.plan == NULL) {
		say_message("error", text == NULL ? "PUBPROOF_PLAN is not set" : why);
		return 2;
	}
	int status = start();
	if (status != 0)
		return status;
	char buffer[4096];
	ssize_t got;
	while ((got = read(STDIN_FILENO, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR))
		; /* until standard input closes: the protocol's "stop" */
	if (app.client != NULL)
		stop();
	return 0;
}
