// boardgame.io's server for the peer game: node server.js <port> <memory|flatfile> [dir]
// Run with NODE_ENV=production. Prints "listening" once it serves.
const { Server, Origins, FlatFile } = require('boardgame.io/server');
const { Cave } = require('./game');

const [port, storage, dir] = process.argv.slice(2);
const db = storage === 'flatfile' ? new FlatFile({ dir, logging: false }) : undefined;
const server = Server({ games: [Cave], db, origins: [Origins.LOCALHOST] });
server.run({ port: Number(port) }, () => console.log('listening'));
