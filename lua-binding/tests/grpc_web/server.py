#!/usr/bin/env python3
"""A gRPC-Web server for the Tarantool end-to-end test (test_grpc_web.lua):
sonora's WSGI app over a threading wsgiref server on 127.0.0.1, serving
svc.greet.v1.Greeter from fixtures/descriptors/svc.fds with a grpcio-style
generic handler. Prints the port on its first line, then serves until
killed. Needs `pip install grpcio sonora protobuf`.

  SayHello  name='missing' -> NOT_FOUND; 'slow' -> sleeps 2 s;
            'remaining' -> message = the grpc-timeout header received
  SayHellos `times` replies; name='missing' -> PERMISSION_DENIED after them
"""
import os
import sys
import time
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import grpc
import sonora.wsgi
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

FIXTURES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '../../../fixtures')
fds = descriptor_pb2.FileDescriptorSet.FromString(open(os.path.join(FIXTURES, 'descriptors/svc.fds'), 'rb').read())
pool = descriptor_pool.DescriptorPool()
for f in fds.file:
    pool.Add(f)
Req = message_factory.GetMessageClass(pool.FindMessageTypeByName('svc.greet.v1.HelloRequest'))
Rep = message_factory.GetMessageClass(pool.FindMessageTypeByName('svc.greet.v1.HelloReply'))
ERR_MSG = 'no user \u00abmissing\u00bb: 100% gone\nbye'


def say_hello(req, ctx):
    if req.name == 'missing':
        ctx.abort(grpc.StatusCode.NOT_FOUND, ERR_MSG)
    if req.name == 'slow':
        time.sleep(2)
    if req.name == 'remaining':
        # sonora 0.2.3's WSGI app drops grpc-timeout (its unit table is keyed
        # by bytes, the header is str), so hand back the header as received.
        return Rep(message=dict(ctx.invocation_metadata()).get('grpc-timeout', ''))
    return Rep(message='hello ' + req.name)


def say_hellos(req, ctx):
    for i in range(req.times):
        r = Rep(message='hello %s #%d' % (req.name, i))
        r.at.seconds = i
        yield r
    if req.name == 'missing':
        ctx.abort(grpc.StatusCode.PERMISSION_DENIED, ERR_MSG)


handler = grpc.method_handlers_generic_handler('svc.greet.v1.Greeter', {
    'SayHello': grpc.unary_unary_rpc_method_handler(
        say_hello, request_deserializer=Req.FromString, response_serializer=Rep.SerializeToString),
    'SayHellos': grpc.unary_stream_rpc_method_handler(
        say_hellos, request_deserializer=Req.FromString, response_serializer=Rep.SerializeToString),
})


class Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


app = sonora.wsgi.grpcWSGI(None)
app.add_generic_rpc_handlers((handler,))
httpd = make_server('127.0.0.1', 0, app, server_class=Server, handler_class=Quiet)
print(httpd.server_port, flush=True)
httpd.serve_forever()
