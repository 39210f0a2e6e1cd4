// A real authorization server for e2e/oauth_test.go: panva's oidc-provider
// (pinned in package-lock.json) with resource indicators (RFC 8707), JWT
// access tokens (RFC 9068), introspection (RFC 7662) and revocation, and
// the client credentials grant. It runs two issuers: the one webmcp-cdp
// trusts, and a foreign one whose tokens it must refuse.
//
//   node server.mjs RESOURCE
//
// RESOURCE is the MCP endpoint's canonical URL, the default resource of a
// token request that names none (the go-sdk's client credentials handler
// sends no resource parameter). When both issuers listen it prints one JSON
// line on stdout: {"issuer": URL, "foreign": URL}. GET /_test/jwks-fetches
// on the trusted issuer says how often its JWKS was fetched.
//
// Clients (secret: the id + "-secret", client_secret_post):
//   agent   webmcp:read webmcp:call, JWT access tokens
//   reader  webmcp:read only
//   short   JWT access tokens good for 2 seconds
//   opaque  opaque access tokens (checked by introspection)
//   webmcp  the resource server's own client, to introspect
//   alice, bob, carol, p01 to p20
//           people's agents, each a person of its own to webmcp-cdp's
//           spaces (a client's own token has no sub: its person is the
//           client), JWT access tokens
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const resource = process.argv[2];
if (!resource) {
  console.error('usage: node server.mjs RESOURCE');
  process.exit(2);
}
const scopes = 'webmcp:read webmcp:call';
const people = ['alice', 'bob', 'carol', ...Array.from({ length: 20 }, (_, i) => `p${String(i + 1).padStart(2, '0')}`)];

function client(id, scope, extra = {}) {
  return {
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    ...(scope ? { scope } : {}),
    token_endpoint_auth_method: 'client_secret_post',
    ...extra,
  };
}

function signingKey(kid) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}

async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}`;
}

async function start(name) {
  const server = http.createServer();
  const issuer = await listen(server);
  const provider = new Provider(issuer, {
    clients: [
      client('agent', scopes),
      client('reader', 'webmcp:read'),
      client('short', scopes),
      client('opaque', scopes),
      client('webmcp', undefined, { grant_types: [], token_endpoint_auth_method: 'client_secret_basic' }),
      ...people.map((id) => client(id, scopes)),
    ],
    jwks: { keys: [signingKey(`${name}-1`)] },
    scopes: ['webmcp:read', 'webmcp:call'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator, c) => ({
          scope: scopes,
          audience: indicator,
          accessTokenTTL: c.clientId === 'short' ? 2 : 600,
          accessTokenFormat: c.clientId === 'opaque' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.on('server_error', (_ctx, err) => console.error(`${name}: server_error`, err));
  let jwksFetches = 0;
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url === '/_test/jwks-fetches') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ fetches: jwksFetches }));
      return;
    }
    if (req.url === '/jwks') jwksFetches += 1;
    callback(req, res);
  });
  return issuer;
}

const issuer = await start('trusted');
const foreign = await start('foreign');
process.stdout.write(`${JSON.stringify({ issuer, foreign })}\n`);
