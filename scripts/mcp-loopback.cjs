// Preloaded into the Streamable HTTP MCP server that scripts/mcp-servers.sh starts (node
// --require): the server listens on a port given alone, which Node binds on every interface.
// A listen call with a port and no host gets 127.0.0.1 here, so the test server is reachable from
// this machine only. Calls that name a host, a path or a handle are left as they are.
'use strict';

const net = require('node:net');

const HOST = '127.0.0.1';
const listen = net.Server.prototype.listen;

function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^[0-9]+$/.test(value));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (isPort(args[0]) && (args.length === 1 || typeof args[1] === 'function' || isBacklog(args))) {
    args.splice(1, 0, HOST);
  } else if (args[0] && typeof args[0] === 'object' && !Array.isArray(args[0]) && isPort(args[0].port)) {
    if (args[0].host === undefined && args[0].path === undefined) {
      args[0] = { ...args[0], host: HOST };
    }
  }
  return listen.apply(this, args);
};

// `listen(port, backlog, callback)`: a number second is the backlog, not a host.
function isBacklog(args) {
  return typeof args[1] === 'number';
}
