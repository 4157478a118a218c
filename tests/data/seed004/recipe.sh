export HERMES_HOME=/tmp/hermes-imggen-test
mkdir -p $HERMES_HOME/plugins/image_gen/my-backend
# …скопируйте __init__.py и plugin.yaml в этот каталог…

export MY_BACKEND_API_KEY=your-test-key
hermes plugins enable my-backend

# Выбрать как активный провайдер
echo "image_gen:" >> $HERMES_HOME/config.yaml
echo "  provider: my-backend" >> $HERMES_HOME/config.yaml

# Проверить работу
hermes -z "Generate an image of a corgi in a spacesuit"
